// The closed list of ERROR categories: their words on the wire, and how a reader of ERROR finds them.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CategoryTest {
    @Test
    void wire_isTheDocumentedWord_andReadsBack() {
        // docs/protocol.md, "Error categories": the closed list, in lower case on the wire.
        assertThat(Arrays.stream(Category.values()).map(Category::wire))
                .containsExactly("busy", "refused", "denied", "malformed", "unavailable", "internal");
        for (Category c : Category.values()) {
            assertThat(Category.of(c.wire())).contains(c);
            assertThat(Category.of(Session.error(3, "why", c))).contains(c);
        }
    }

    @Test
    void of_anOldDaemonsOneArgumentError_orAnUnknownWord_isEmpty() {
        assertThat(Category.of(Frame.of(3, Code.ERROR.value(), "why"))).isEmpty();
        assertThat(Category.of(Frame.of(3, Code.ERROR.value(), "why", "sleepy"))).isEmpty();
        assertThat(Category.of("BUSY")).isEqualTo(Optional.empty());
    }

    @Test
    void error_keepsTheReasonFirst_soAOneArgumentReaderStillReadsIt() {
        Frame f = Session.error(9, "job 3 cannot be granted now", Category.BUSY);
        assertThat(f.text(0)).isEqualTo("job 3 cannot be granted now");
        assertThat(f.args()).hasSize(2);
    }
}
