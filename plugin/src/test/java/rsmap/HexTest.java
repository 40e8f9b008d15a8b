// The escapes of error lines and logs: the same digits String.format's %0Nx gives, on seeded random values.
package rsmap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

class HexTest {
    @Test
    void of_isStringFormatsZeroPaddedLowerCase_forRandomValuesAndWidths() {
        assertThat(Hex.of(0x1b, 2)).isEqualTo("1b");
        assertThat(Hex.of(0x2028, 4)).isEqualTo("2028");
        assertThat(Hex.of(0xffffffffL, 8)).isEqualTo("ffffffff");
        long seed = System.nanoTime();
        Random r = new Random(seed);
        for (int i = 0; i < 10_000; i++) {
            int digits = 1 + r.nextInt(16);
            long v = r.nextLong();
            long low = digits == 16 ? v : v & ((1L << (4 * digits)) - 1);
            assertThat(Hex.of(v, digits)).as("seed %d", seed).isEqualTo(String.format("%0" + digits + "x", low));
            assertThat(Hex.appendUpper(new StringBuilder("U+"), v, digits).toString()).as("seed %d", seed)
                    .isEqualTo("U+" + String.format("%0" + digits + "X", low));
        }
    }
}
