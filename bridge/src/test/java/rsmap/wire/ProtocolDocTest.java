// Golden protocol tests from docs/protocol.md: every byte-exact example in its table is what the encoder
// writes and what the decoder reads back.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ProtocolDocTest {
    static final Path DOC = Path.of("..", "docs", "protocol.md");
    /** | tid T, code C, ... | `BYTES` | */
    static final Pattern ROW = Pattern.compile("^\\| tid ([0-9a-f]+), code ([0-9a-f]{4}),[^|]*\\| `([^`]*)` \\|$");

    @Test
    void everyExampleOfTheDoc_encodesAndDecodesByteForByte() throws Exception {
        List<String> rows = new ArrayList<>();
        for (String line : Files.readAllLines(DOC)) {
            Matcher m = ROW.matcher(line);
            if (!m.matches()) {
                continue;
            }
            rows.add(line);
            byte[] bytes = TestClient.unescape(m.group(3));
            List<Frame> frames = FrameDecoderTest.decodeAll(bytes);
            assertThat(frames).as(line).hasSize(1);
            Frame f = frames.get(0);
            assertThat(f.tid()).as(line).isEqualTo(Long.parseLong(m.group(1), 16));
            assertThat(f.code()).as(line).isEqualTo(Integer.parseInt(m.group(2), 16));
            assertThat(f.encode()).as(line).isEqualTo(bytes);
        }
        assertThat(rows).as("the doc's examples").hasSizeGreaterThanOrEqualTo(5);
    }
}
