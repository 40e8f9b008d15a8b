// rsmap-jsonread.c, the JSON reader of rsmap-place and of the Lua module job_submit.lua loads into slurmctld,
// through its driver (bridge/src/test/c/json-check.c): seeded random JSON texts - nested lists and objects
// of every kind of value, strings with escapes and characters beyond the BMP, whitespace anywhere, lists of
// hundreds of values (its value blocks grow as values come) - read back as Jackson reads them; every cut
// of a text is one error line, never a crash.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class JsonReadIT {
    static final Path CHECK = Path.of("..").toAbsolutePath().normalize().resolve("bridge/target/json-check");
    static final ObjectMapper JSON = new ObjectMapper();
    static final String[] STRINGS = {"", "node01", "a\"b", "back\\slash", "tab\tnew\nline", "é", "ß€", "😀", "\u0001",
        "/", "x\u2028y"};

    record Run(int exit, String out) {
    }

    static Run check(String text) throws Exception {
        Process p = new ProcessBuilder(CHECK.toString()).redirectErrorStream(true).start();
        p.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), out);
    }

    /** A random value as JSON text, whitespace between every token; depth bounds the nesting. */
    static void value(Random r, int depth, StringBuilder out) {
        int kind = r.nextInt(depth > 5 ? 6 : 9);
        space(r, out);
        switch (kind) {
            case 0 -> out.append("null");
            case 1 -> out.append(r.nextBoolean());
            case 2 -> out.append(r.nextInt(2000) - 1000);
            case 3 -> out.append(r.nextInt(100) - 50).append('.').append(r.nextInt(100)).append(r.nextBoolean() ? "e3" : "");
            case 4, 5 -> string(r, out);
            case 6, 7 -> {
                out.append('[');
                int n = r.nextInt(10) == 0 ? 200 + r.nextInt(300) : r.nextInt(5);
                for (int i = 0; i < n; i++) {
                    if (i > 0) {
                        space(r, out);
                        out.append(',');
                    }
                    value(r, depth + 1, out);
                }
                space(r, out);
                out.append(']');
            }
            default -> {
                out.append('{');
                int n = r.nextInt(5);
                for (int i = 0; i < n; i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    space(r, out);
                    out.append("\"k").append(i).append('"');
                    space(r, out);
                    out.append(':');
                    value(r, depth + 1, out);
                }
                space(r, out);
                out.append('}');
            }
        }
        space(r, out);
    }

    static void string(Random r, StringBuilder out) {
        String s = STRINGS[r.nextInt(STRINGS.length)];
        if (r.nextBoolean()) { // Jackson's escaping
            try {
                out.append(JSON.writeValueAsString(s));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return;
        }
        out.append('"'); // every character as \\uXXXX, surrogate pairs for the non-BMP
        s.chars().forEach(c -> out.append(String.format("\\u%04x", c)));
        out.append('"');
    }

    static void space(Random r, StringBuilder out) {
        if (r.nextInt(4) == 0) {
            out.append(" \t\r\n".charAt(r.nextInt(4)));
        }
    }

    @Test
    void randomTexts_readAsJacksonReadsThem_andEveryCutIsAnError() throws Exception {
        assertThat(CHECK).as("built by build.sh").isExecutable();
        Random random = new Random(20261203L);
        for (int i = 0; i < 60; i++) {
            StringBuilder text = new StringBuilder();
            value(random, 0, text);
            JsonNode expected = JSON.readTree(text.toString());
            Run run = check(text.toString());
            assertThat(run.exit()).as("%s\n%s", text, run.out()).isZero();
            assertThat(JSON.readTree(run.out())).as(text.toString()).isEqualTo(expected);
            String t = text.toString().strip();
            if (t.length() > 1 && (t.startsWith("[") || t.startsWith("{") || t.startsWith("\""))) {
                Run cut = check(t.substring(0, 1 + random.nextInt(t.length() - 1)));
                assertThat(cut.exit()).as("a cut of %s: %s", t, cut.out()).isEqualTo(1);
                assertThat(cut.out()).startsWith("error: ").hasLineCount(1);
            }
        }
    }

    @Test
    void nestingAndTrailingText_areErrors_andDeepButBoundedNestingReads() throws Exception {
        assertThat(check("[".repeat(64) + "]".repeat(64)).exit()).isZero();
        assertThat(check("[".repeat(66) + "]".repeat(66)).out()).isEqualTo("error: nested too deeply\n");
        assertThat(check("[1] 2").out()).isEqualTo("error: more text after the value\n");
        String many = "[" + "1,".repeat(100_000) + "1]"; // 100,002 values: blocks of 32, 64, ... as they fill
        assertThat(check(many).out().equals(many + "\n")).as("100,002 values read back").isTrue();
    }
}
