// The domain's refusals and the wire's error categories map one to one, both ways (docs/protocol.md, "Error
// categories"): a client decides a job's fate by the category, so no kind may reach the wire as another.
package rsmap.daemon.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import rsmap.wire.Category;

class WireErrorsTest {
    @Test
    void everyKind_becomesTheCategoryOfItsName_andBack() {
        assertThat(Refusal.Kind.values()).hasSameSizeAs(Category.values());
        for (Refusal.Kind k : Refusal.Kind.values()) {
            Category c = WireErrors.category(k);
            assertThat(c.name()).as("kind %s", k).isEqualTo(k.name());
            assertThat(WireErrors.kind(Optional.of(c), Refusal.Kind.INTERNAL)).isEqualTo(k);
        }
        assertThat(WireErrors.kind(Optional.empty(), Refusal.Kind.BUSY)).as("an older daemon's ERROR").isEqualTo(
                Refusal.Kind.BUSY);
    }

    @Test
    void toWire_keepsTheReasonAndTheCategory() {
        var e = WireErrors.toWire(Refusal.unavailable("journal: disk full"));
        assertThat(e.category()).isEqualTo(Category.UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("journal: disk full");
        assertThat(Refusal.busy("x").kind()).isEqualTo(Refusal.Kind.BUSY);
        assertThat(Refusal.refused("x").kind()).isEqualTo(Refusal.Kind.REFUSED);
        assertThat(Refusal.denied("x").kind()).isEqualTo(Refusal.Kind.DENIED);
        assertThat(Refusal.malformed("x").kind()).isEqualTo(Refusal.Kind.MALFORMED);
        assertThat(Refusal.internal("x").kind()).isEqualTo(Refusal.Kind.INTERNAL);
    }
}
