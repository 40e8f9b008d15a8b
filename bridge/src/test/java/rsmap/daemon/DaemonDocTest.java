// Golden protocol conversations: every ```conversation block of docs/protocol.md is replayed against a
// real rsmapd configured as the page says, and each answer must be the documented bytes exactly.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.authority.AuthorityTest;
import rsmap.daemon.config.Config;
import rsmap.wire.Frame;
import rsmap.wire.Ports;
import rsmap.wire.TestClient;

/**
 * Lines {@code A> BYTES} are sent by client A, {@code A< BYTES} read by it. To write new conversations,
 * put {@code ?} for an answer and {@code ? TID CODE JSON} (hex TID and code) for a command, and run with
 * {@code -Drsmap.golden.update=true}: the doc is rewritten with the real bytes, to be read and committed.
 */
@Timeout(120)
class DaemonDocTest {
    static final Path DOC = Path.of("..", "docs", "protocol.md");
    private static final boolean UPDATE = Boolean.getBoolean("rsmap.golden.update");

    @TempDir
    Path tmp;

    @Test
    void everyConversationOfTheDoc_isWhatTheDaemonSaysByteForByte() throws Exception {
        List<String> lines = Files.readAllLines(DOC, StandardCharsets.UTF_8);
        List<String> out = new ArrayList<>();
        int blocks = 0;
        int at = lines.indexOf("```rsmapd.conf");
        assertThat(at).as("the settings every conversation runs with (```rsmapd.conf)").isNotNegative();
        settings = lines.subList(at + 1, lines.subList(at, lines.size()).indexOf("```") + at);
        for (int i = 0; i < lines.size(); i++) {
            out.add(lines.get(i));
            if (!lines.get(i).equals("```conversation")) {
                continue;
            }
            List<String> block = new ArrayList<>();
            for (i++; !lines.get(i).equals("```"); i++) {
                block.add(lines.get(i));
            }
            out.addAll(replay(block, blocks++));
            out.add("```");
        }
        assertThat(blocks).as("conversations in the doc").isGreaterThanOrEqualTo(5);
        if (UPDATE) {
            Files.writeString(DOC, String.join("\n", out) + "\n", StandardCharsets.UTF_8);
        }
    }

    /** The page's common settings of the conversation being replayed. */
    private List<String> settings;

    /**
     * The rsmapd.conf of a conversation as the page states it: the common settings, each replaced or
     * added to by a {@code # key = value} line that opens the block; {@code USER} is the connecting user,
     * {@code PORT} a free port. Relative paths are beside the file, with a copy of examples/complexes.
     */
    private Config config(List<String> header, int n) throws Exception {
        Map<String, String> conf = new LinkedHashMap<>();
        List<String> given = new ArrayList<>(settings);
        header.forEach(h -> given.add(h.substring(2)));
        for (String line : given) {
            int eq = line.indexOf('=');
            assertThat(eq).as("a setting of the page: %s", line).isPositive();
            conf.put(line.substring(0, eq).strip(), line.strip());
        }
        Path dir = Files.createDirectories(tmp.resolve("d" + n));
        Files.copy(Path.of("..", "examples", "complexes"), dir.resolve("complexes"));
        String text = String.join("\n", conf.values()).replaceAll("\\bUSER\\b", System.getProperty("user.name"))
                .replaceAll("\\bPORT\\b", Integer.toString(Ports.free())) + "\n";
        Path file = Files.writeString(dir.resolve("rsmapd.conf"), text);
        return Config.parse(text, file, "node00"); // the machine's own name, where no host = is given
    }

    private List<String> replay(List<String> block, int n) throws Exception {
        int body = 0;
        while (body < block.size() && block.get(body).startsWith("# ")) {
            body++;
        }
        Config config = config(block.subList(0, body), n);
        List<String> out = new ArrayList<>(block.subList(0, body));
        Map<String, TestClient> clients = new LinkedHashMap<>();
        // No host logs in over TCP here: the conversation is on the Unix socket.
        try (Daemon daemon = TestDaemon.start(config, AuthorityTest.TOKENS)) {
            for (String line : block.subList(body, block.size())) {
                String who = line.substring(0, 1);
                TestClient c = clients.get(who);
                if (c == null) {
                    c = new TestClient(config.socket());
                    clients.put(who, c);
                }
                String bytes = line.substring(3);
                if (line.charAt(1) == '>') {
                    if (bytes.startsWith("? ")) {
                        String[] p = bytes.split(" ", 4);
                        bytes = escape(Frame.of(Long.parseLong(p[1], 16), Integer.parseInt(p[2], 16), p[3]).encode());
                    }
                    c.send(TestClient.unescape(bytes));
                    out.add(who + "> " + bytes);
                } else {
                    Frame got = c.next();
                    String actual = got == null ? "(closed)" : escape(got.encode());
                    if (!UPDATE) {
                        assertThat(actual).as("conversation %d, %s", n, line).isEqualTo(bytes);
                    }
                    out.add(who + "< " + actual);
                }
            }
        } finally {
            for (TestClient c : clients.values()) {
                c.close();
            }
        }
        return out;
    }

    /** Bytes as the doc writes them: printable ASCII as is, the rest as \xNN. */
    static String escape(byte[] bytes) {
        StringBuilder b = new StringBuilder();
        for (byte x : bytes) {
            int c = x & 0xff;
            if (c >= 0x20 && c < 0x7f && c != '\\') {
                b.append((char) c);
            } else {
                b.append(String.format("\\x%02x", c));
            }
        }
        return b.toString();
    }
}
