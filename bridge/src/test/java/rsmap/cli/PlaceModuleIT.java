// rsmap_place.so, the Lua module job_submit.lua loads into slurmctld, in a Lua of the test's own (lua-run, the
// host's liblua5.1; the module loaded with package.loadlib as the script does): for every answer of a real
// authority it gives what `rsmap-place --json` prints, and against stand-ins that answer badly or not at all
// it returns within its timeout, writes nothing and leaves no descriptor open.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.PlaceAuthority;
import rsmap.wire.Code;
import rsmap.wire.Frame;

class PlaceModuleIT {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path PLACE = ROOT.resolve("bridge/target/rsmap-place");
    static final Path LUA = ROOT.resolve("bridge/target/lua-run");
    static final Path MODULE = ROOT.resolve("bridge/target/rsmap_place.so");
    /** One call: arg = module, socket, filter, request ("" for nil), timeout; prints line and err. */
    static final String CALL = String.join("\n",
            "local place = assert(package.loadlib(arg[1], 'luaopen_rsmap_place'))().place",
            "local request = arg[4] ~= '' and arg[4] or nil",
            "local line, err = place(arg[3], request, arg[2], tonumber(arg[5]))",
            "io.write(tostring(line), '\\n', tostring(err), '\\n')", "");

    @TempDir
    static Path tmp;
    static PlaceAuthority authority;
    static Path socket;
    static final List<ServerSocketChannel> servers = new ArrayList<>();

    record Outcome(int exit, String out, String err, long millis) {
    }

    @BeforeAll
    static void authorityWithTwoHosts() throws Exception {
        String why = "the module and its test driver are built only where Lua 5.1's lua.h is (liblua5.1-0-dev): " + MODULE;
        if (!Files.isRegularFile(MODULE) || !Files.isExecutable(LUA)) {
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError("CI=true: " + why);
            }
            org.junit.jupiter.api.Assumptions.assumeTrue(false, why);
        }
        authority = PlaceAuthority.start(tmp.resolve("authority"), null);
        socket = authority.socket();
    }

    @AfterAll
    static void stop() throws Exception {
        for (ServerSocketChannel s : servers) {
            s.close();
        }
        if (authority != null) {
            authority.close();
        }
    }

    static Outcome run(List<String> cmd) throws Exception {
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).start();
        assertThat(p.waitFor(40, TimeUnit.SECONDS)).as("%s ends within its 30 s bound", cmd).isTrue();
        return new Outcome(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8),
                (System.nanoTime() - t0) / 1_000_000);
    }

    static Outcome lua(String script, String... args) throws Exception {
        Path file = Files.writeString(Files.createTempFile(tmp, "call", ".lua"), script);
        List<String> cmd = new ArrayList<>(List.of(LUA.toString(), file.toString(), MODULE.toString()));
        cmd.addAll(List.of(args));
        return run(cmd);
    }

    /** The module's two values, as CALL prints them. */
    static Outcome module(Path at, String filter, String request, String timeout) throws Exception {
        Outcome o = lua(CALL, at.toString(), filter, request, timeout);
        assertThat(o.exit()).as("lua-run: %s", o.err()).isZero();
        assertThat(o.err()).as("the module writes nothing").isEmpty();
        return o;
    }

    /** Every answer and refusal: the module's line is rsmap-place --json's stdout, its err rsmap-place's stderr. */
    @Test
    void everyAnswer_isWhatRsmapPlaceJsonPrints() throws Exception {
        List<String[]> asks = new ArrayList<>(List.of(new String[][] {
            {"cpu_speed > 2GHz", ""}, {"arch == \"ppc64le\"", ""}, {"cpu_speed >", ""}, {"cpu_speed unparsable", ""},
            {"no_such_attribute == 1", ""}, {"arch == \"x\u0001\"", ""}, {"cpu_speed > 1GHz", "gpu=2"},
            {"cpu_speed > 1GHz", "gpu=3"}, {"cpu_speed > 1GHz", "gpu=1["}, {"host in [\"nöde'1\", \"a\\\\b\"]", ""}}));
        Random random = new Random(20261203L);
        String alphabet = "ab01 =<>!\"'\\[],.&|()éß";
        for (int i = 0; i < 20; i++) {
            StringBuilder f = new StringBuilder("arch == \"");
            for (int k = 1 + random.nextInt(12); k > 0; k--) {
                f.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            asks.add(new String[] {random.nextBoolean() ? f + "\"" : f.toString(), ""});
        }
        for (String[] ask : asks) {
            List<String> cmd = new ArrayList<>(List.of(PLACE.toString(), "--json", "--socket", socket.toString(),
                    "--filter", ask[0]));
            if (!ask[1].isEmpty()) {
                cmd.addAll(List.of("--request", ask[1]));
            }
            Outcome c = run(cmd);
            Outcome m = module(socket, ask[0], ask[1], "5");
            String line = c.out().isEmpty() ? "nil" : c.out().stripTrailing();
            String err = c.exit() == 0 || c.exit() == 3 ? "nil" : c.err().stripTrailing();
            assertThat(m.out()).as("filter %s, request %s (rsmap-place exit %d)", ask[0], ask[1], c.exit())
                    .isEqualTo(line + "\n" + err + "\n");
        }
    }

    /** A stand-in server on a socket of its own: each connection handed to {@code serve}, then closed. */
    static Path server(String name, Consumer<SocketChannel> serve) throws IOException {
        Path at = tmp.resolve(name + ".sock");
        ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        s.bind(UnixDomainSocketAddress.of(at));
        servers.add(s);
        Thread t = new Thread(() -> {
            while (s.isOpen()) {
                try (SocketChannel c = s.accept()) {
                    serve.accept(c);
                } catch (IOException e) {
                    // closed: the test is over
                }
            }
        }, "stand-in " + name);
        t.setDaemon(true);
        t.start();
        return at;
    }

    /** Writes {@code frames}, then reads until the client hangs up. */
    static Consumer<SocketChannel> answering(Frame... frames) {
        return c -> {
            try {
                for (Frame f : frames) {
                    c.write(ByteBuffer.wrap(f.encode()));
                }
                drain(c);
            } catch (IOException e) {
                // the client gave up
            }
        };
    }

    static Consumer<SocketChannel> writing(String bytes) {
        return c -> {
            try {
                c.write(ByteBuffer.wrap(bytes.getBytes(StandardCharsets.US_ASCII)));
                drain(c);
            } catch (IOException e) {
                // the client gave up
            }
        };
    }

    static void drain(SocketChannel c) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(65536);
        while (c.read(b.clear()) >= 0) {
            // what the client sent, unread: a daemon that does not answer
        }
    }

    static Frame ok(long tid) {
        return Frame.of(tid, Code.OK.value());
    }

    /**
     * Stand-ins that answer badly or not at all: each call returns within its timeout (1 s; a lost
     * connection is tried again within it, as rsmap-place does) with what rsmap-place --json would print.
     */
    @Test
    void badOrNoAnswers_endWithinTheTimeout_asRsmapPlaceJsonWould() throws Exception {
        String unavailable = "\",\"category\":\"unavailable\"}";
        String[][] cases = {
            // name, the stand-in's behaviour is chosen below; the line and err expected
            {"silent", "{\"error\":\"rsmapd did not answer INIT within 1 s" + unavailable,
                "error: rsmapd did not answer INIT within 1 s"},
            {"dribbling", "{\"error\":\"rsmapd did not answer INIT within 1 s" + unavailable,
                "error: rsmapd did not answer INIT within 1 s"},
            // lost: tried again only where the pause before (1 s) ends before the deadline
            {"hangup", "{\"error\":\"lost rsmapd during INIT" + unavailable, "error: lost rsmapd during INIT"},
            {"not-json", "nil", "error: rsmapd answered something that is not JSON: "},
            {"busy", "{\"error\":\"rsmapd: the authority is busy\",\"category\":\"busy\"}",
                "error: rsmapd: the authority is busy"},
            {"no-category", "nil", "error: rsmapd: an older rsmapd refuses"},
            {"no-state", "{\"error\":\"rsmapd answered PLACE without its STATE\",\"category\":\"internal\"}",
                "error: rsmapd answered PLACE without its STATE"},
        };
        for (String[] k : cases) {
            Consumer<SocketChannel> serve = switch (k[0]) {
                case "silent" -> answering();
                case "dribbling" -> writing("00000400000000010"); // a frame begun, never finished
                case "hangup" -> c -> { };
                case "not-json" -> answering(ok(1), Frame.of(2, Code.STATE.value(), "{\"pass\":[\"node01\""), ok(2));
                case "busy" -> answering(ok(1), rsmap.wire.Session.error(2, "the authority is busy",
                        rsmap.wire.Category.BUSY));
                case "no-category" -> answering(ok(1), Frame.of(2, Code.ERROR.value(), "an older rsmapd refuses"));
                default -> answering(ok(1), ok(2));
            };
            Path at = server(k[0], serve);
            Outcome m = module(at, "cpu_speed > 2GHz", "", "1");
            String[] values = m.out().split("\n", -1);
            assertThat(values[0]).as(k[0]).isEqualTo(k[1]);
            assertThat(values[1]).as(k[0]).startsWith(k[2]);
            // 1 s, lua-run's start and a loaded 2-core machine's delays: under the 1 s + 2 s of retries
            assertThat(m.millis()).as("%s: ends at the 1 s timeout, not after retries", k[0]).isLessThan(2900);
            ProcessBuilder pb = new ProcessBuilder(PLACE.toString(), "--json", "--socket", at.toString(), "--filter",
                    "cpu_speed > 2GHz");
            pb.environment().put("RSMAP_TIMEOUT", "1");
            Process p = pb.start();
            assertThat(p.waitFor(40, TimeUnit.SECONDS)).isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).stripTrailing();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).stripTrailing();
            assertThat(m.out()).as("rsmap-place --json on %s", k[0]).isEqualTo((out.isEmpty() ? "nil" : out) + "\n"
                    + err + "\n");
        }
    }

    /** One timed call: arg = module, socket, filter ("huge": over the frame bound as JSON, "big": 900 KB under it), timeout. */
    static final String TIMED = String.join("\n",
            "local place = assert(package.loadlib(arg[1], 'luaopen_rsmap_place'))().place",
            "local filter = arg[3] == 'huge' and string.rep('a', 1100000)",
            "  or arg[3] == 'big' and ('arch == \"' .. string.rep('a', 900000) .. '\"') or arg[3]",
            "local t0 = now()",
            "local line, err = place(filter, nil, arg[2], tonumber(arg[4]))",
            "io.write(tostring(line), '\\n', tostring(err), '\\n', string.format('%d', (now() - t0) * 1000), '\\n')", "");

    /**
     * A frame over the protocol's 1 MiB bound ends the call at once, never tried again (the retries' pauses,
     * 1 s and 2 s, would hold slurmctld's job lock): an answer that long is no answer (unavailable: the script
     * accepts the job), an argument that long is the job's (refused, never sent: no connection is made).
     */
    @Test
    void aFrameOverTheBound_endsAtOnce_neverTriedAgain() throws Exception {
        String unavailable = "\",\"category\":\"unavailable\"}";
        String twoMiB = "0020000000000001" + "8000"; // 2 MiB announced: above the 1 MiB bound
        Path initAnswer = server("oversize-init", writing(twoMiB));
        Path placeAnswer = server("oversize-place", c -> {
            try {
                c.write(ByteBuffer.wrap(ok(1).encode()));
                c.write(ByteBuffer.wrap("0020000000000002800c".getBytes(StandardCharsets.US_ASCII)));
                drain(c);
            } catch (IOException e) {
                // the client gave up
            }
        });
        for (Object[] k : new Object[][] {{initAnswer, "INIT"}, {placeAnswer, "PLACE"}}) {
            String why = "the answer to " + k[1] + " exceeds the protocol's 1 MiB frame bound";
            Outcome m = lua(TIMED, k[0].toString(), "cpu_speed > 2GHz", "5");
            assertThat(m.err()).isEmpty();
            String[] values = m.out().split("\n", -1);
            assertThat(values[0]).isEqualTo("{\"error\":\"" + why + unavailable);
            assertThat(values[1]).isEqualTo("error: " + why);
            assertThat(Long.parseLong(values[2])).as("ms in place(): before the first retry's 1 s pause").isLessThan(900);
        }
        java.util.concurrent.atomic.AtomicInteger connections = new java.util.concurrent.atomic.AtomicInteger();
        Path counted = server("counted", c -> connections.incrementAndGet());
        Outcome huge = lua(TIMED, counted.toString(), "huge", "5");
        String why = "the argument of PLACE (1100013 bytes as JSON) is over the protocol's 1 MiB frame bound: not sent";
        assertThat(huge.out().split("\n", -1)[0]).isEqualTo("{\"error\":\"" + why + "\",\"category\":\"refused\"}");
        assertThat(huge.out().split("\n", -1)[1]).isEqualTo("error: " + why);
        assertThat(connections.get()).as("not sent: no connection made").isZero();
    }

    /**
     * A frame that does not decode is a lost connection, whatever an earlier wait left in errno: a 900 KB
     * argument fills the socket's buffer (the send waits once for room, EAGAIN), then the answer is garbage.
     */
    @Test
    void anUndecodableAnswer_afterASendThatWaited_isLost_notATimeout() throws Exception {
        Path garbage = server("garbage", c -> {
            try {
                c.write(ByteBuffer.wrap("zzzzzzzzzzzzzzzzzzzz".getBytes(StandardCharsets.US_ASCII)));
                Thread.sleep(200); // the client's send finds the buffer full and waits
                drain(c);
            } catch (IOException | InterruptedException e) {
                // the client gave up
            }
        });
        Outcome m = lua(TIMED, garbage.toString(), "big", "1");
        String[] values = m.out().split("\n", -1);
        assertThat(values[1]).as(m.out()).isEqualTo("error: lost rsmapd during INIT");
    }

    /**
     * Hundreds of calls, answered, refused, unreachable and timed out: no descriptor stays open, nothing is
     * written, and bad arguments are answered nil and a line, never a Lua error (slurmctld's script goes on).
     */
    @Test
    void manyCalls_leaveNoDescriptor_andBadArgumentsAreNilAndALine() throws Exception {
        Path silent = server("silent-many", answering());
        String script = String.join("\n",
                "local place = assert(package.loadlib(arg[1], 'luaopen_rsmap_place'))().place",
                "local before = open_fds()",
                "local calls = 0",
                "for i = 1, 100 do",
                "  assert(place('cpu_speed > 2GHz', nil, arg[2], 5):find('\"pass\":', 1, true))",
                "  assert(select(2, place('cpu_speed unparsable', nil, arg[2], 5)):find('column 11', 1, true))",
                "  assert(select(2, place('cpu_speed > 2GHz', 'gpu=1', arg[3], 5)):find('cannot reach', 1, true))",
                "  if i % 25 == 0 then assert(select(2, place('a == 1', nil, arg[4], 0.05)):find('did not answer', 1, true))",
                "  else assert(place('cpu_speed > 1GHz', 'gpu=3', arg[2], 5):find('\"decision\":\"none\"', 1, true)) end",
                "  calls = calls + 4",
                "end",
                "collectgarbage()",
                "io.write('descriptors ', before, ' ', open_fds(), ' ', calls, '\\n')",
                "for _, bad in ipairs({ {nil}, {42}, {'a\\0b'}, {'a', 7}, {'a', nil, {}}, {'a', nil, nil, 0},",
                "    {'a', nil, nil, -1}, {'a', nil, nil, 0/0}, {'a', nil, nil, 'soon'} }) do",
                "  local line, err = place(bad[1], bad[2], bad[3], bad[4])",
                "  io.write(tostring(line), ' ', err, '\\n')",
                "end", "");
        Outcome o = lua(script, socket.toString(), tmp.resolve("none.sock").toString(), silent.toString());
        assertThat(o.exit()).as(o.err()).isZero();
        assertThat(o.err()).isEmpty();
        List<String> lines = o.out().lines().toList();
        String[] fds = lines.get(0).split(" ");
        assertThat(fds[3]).as("calls made").isEqualTo("400");
        assertThat(fds[2]).as("descriptors open after 400 calls").isEqualTo(fds[1]);
        assertThat(lines.subList(1, lines.size())).containsExactly(
                "nil error: rsmap_place.place: the filter must be a string",
                "nil error: rsmap_place.place: the filter must be a string",
                "nil error: rsmap_place.place: the filter must be a string without NUL bytes",
                "nil error: rsmap_place.place: the request must be a string",
                "nil error: rsmap_place.place: the socket must be a string",
                "nil error: rsmap_place.place: the timeout must be a number of seconds above 0",
                "nil error: rsmap_place.place: the timeout must be a number of seconds above 0",
                "nil error: rsmap_place.place: the timeout must be a number of seconds above 0",
                "nil error: rsmap_place.place: the timeout must be a number of seconds above 0");
    }
}
