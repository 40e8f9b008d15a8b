// Jazzer fuzz test of the daemon's command arguments (the JSON of JOB_START, JOB_END, JOB_ENTER, QUERY,
// SET_FILTERS, ...): any bytes give exactly one OK or ERROR, never an internal error, and an ERROR
// changes nothing.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import rsmap.daemon.authority.AuthorityTest;
import rsmap.daemon.job.EventHub;
import rsmap.daemon.job.Views;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Ports;
import rsmap.wire.Session;

class CommandFuzzTest {
    private static final Code[] CODES = {Code.JOB_START, Code.JOB_END, Code.JOB_ENTER, Code.QUERY, Code.SET_FILTERS,
        Code.LIST_FILTERS, Code.MODEL_DEF, Code.START_EVENTS, Code.STOP_EVENTS, Code.RELOAD, Code.REALLOC, Code.RELEASE,
        Code.REALLOC_CANCEL};
    /** Pieces a REALLOC's JSON is put together from, beside the raw bytes. */
    private static final String[] PIECES = {"\"job\":\"7\"", "\"task\":\"1\"", "\"tag\":\"t\"", "\"add\":\"gpu=1\"",
        "\"sub\":\"gpu=1\"", "\"ids\":{\"node01\":{\"gpu\":[\"0\"]}}", "\"spec_add\":{\"version\":1}", "\"R\":{}",
        "\"add\":\"gpu=1[same=id]\"", "\"ids\":{\"node01\":{\"gpu\":[\"1\"]}}", "\"x\":1",
        // JOB_START's node filter: one this host passes, one it fails, one that does not parse
        "\"request\":\"gpu=1\"", "\"filter\":\"cpu_speed > 2GHz\"", "\"filter\":\"arch == \\\"ppc64le\\\"\"",
        "\"filter\":\"((kernel >\""};
    private static Daemon daemon;

    private static synchronized Daemon daemon() throws Exception {
        if (daemon == null) {
            Path dir = Files.createTempDirectory("rsmap-fuzz");
            daemon = new Daemon(TestDaemon.config(dir, "gpu=4(0 0 1[numa_node=1] 1[numa_node=1]),nic=1(ib0)",
                    "reconcile_interval = 0", "attributes = cpu_speed=2.4GHz, arch=x86_64, kernel=6.5.2",
                    "filter = arch != \"aarch64\""), rsmap.complex.ComplexTable.parse(Files.readString(dir.resolve("complexes"))));
        }
        return daemon;
    }

    @FuzzTest
    void anyArguments_oneOkOrError_neverInternal_andAnErrorChangesNothing(FuzzedDataProvider data) throws Exception {
        Daemon d = daemon();
        Session s = new Session(new Session.Handler() {
            @Override
            public List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
                return d.handle(code, command, session);
            }

            @Override
            public void closed(Session session) {
                d.closed(session); // a waiting realloc goes with its connection
            }
        }, new Session.Peer(data.consumeBoolean() ? "root" : "bob", "bob", data.consumeBoolean() ? 0 : 1001, 1001, 0));
        List<Frame> events = new ArrayList<>();
        s.attach((frame, force) -> events.add(frame));
        s.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
        Code code = data.pickValue(CODES);
        if (data.consumeBoolean()) { // a running job 7 of bob's, for REALLOC, RELEASE and REALLOC_CANCEL to act on
            Session root = new Session((code2, command, session) -> d.handle(code2, command, session),
                    new Session.Peer("root", "root", 0, 0, 0));
            root.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
            root.onCommand(Frame.of(2, Code.JOB_START.value(), "{\"job\":\"7\",\"user\":\"bob\",\"request\":\"gpu=2\"}"));
        }
        int n = data.consumeInt(0, 3);
        List<String> args = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (data.consumeBoolean()) {
                List<String> pieces = new ArrayList<>();
                for (int k = data.consumeInt(0, 4); k > 0; k--) {
                    pieces.add(data.pickValue(PIECES));
                }
                args.add("{" + String.join(",", pieces) + "}");
            } else {
                args.add(data.consumeString(400));
            }
        }
        String before = state(d);
        List<Frame> answer = s.onCommand(Frame.of(2, code.value(), args.toArray(new String[0])));
        if (answer.isEmpty()) {
            assertThat(code).isIn(Code.START_EVENTS, Code.REALLOC); // the stream, or a waiting realloc, stays open
        } else {
            Frame last = answer.get(answer.size() - 1);
            assertThat(last.code()).isIn(Code.OK.value(), Code.ERROR.value());
            if (last.code() == Code.ERROR.value()) {
                assertThat(last.text(0)).doesNotStartWith("internal error").doesNotContain("\n");
                // docs/protocol.md, "Error categories": every ERROR says its category, one of the closed list
                assertThat(last.args()).hasSize(2);
                assertThat(rsmap.wire.Category.of(last)).as(last.text(0)).isPresent()
                        .isNotEqualTo(java.util.Optional.of(rsmap.wire.Category.INTERNAL));
                assertThat(state(d)).isEqualTo(before);
            }
        }
        s.end();
        for (String job : d.cluster().runningJobs()) { // back to an empty host for the next input
            Session root = new Session((code2, command, session) -> d.handle(code2, command, session),
                    new Session.Peer("root", "root", 0, 0, 0));
            root.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
            String[] parts = job.split("\\.", 2);
            root.onCommand(Frame.of(3, Code.JOB_END.value(), "{\"job\":\"" + parts[0] + "\""
                    + (parts.length > 1 ? ",\"task\":\"" + parts[1] + "\"" : "") + "}"));
        }
        assertThat(d.cluster().runningJobs()).isEmpty();
        assertThat(d.waitingReallocs()).isZero();
    }

    /** The authority's commands, pieces of their JSON beside raw bytes. */
    private static final Code[] AUTHORITY_CODES = {Code.PLACE, Code.REGISTER, Code.HOST_EVENT, Code.RECONCILE,
        Code.JOB_START, Code.JOB_END, Code.QUERY, Code.MODEL_DEF};
    private static final String[] AUTHORITY_PIECES = {"\"host\":\"node01\"", "\"job\":\"7\"", "\"request\":\"lic=1\"",
        "\"slots\":2", "\"filter\":\"cpu_speed > 2GHz\"", "\"filter\":\"((\"", "\"alternatives\":[{\"request\":\"gpu=1\","
        + "\"slots\":1},{\"slots\":3}]", "\"alternatives\":[1,\"x\"]", "\"candidates\":[\"node01\",\"nope\"]",
        "\"group\":\"arch\"", "\"whole_hosts\":true", "\"state\":{\"complex_values\":\"gpu=2(0 1)\",\"slots\":4,"
        + "\"attributes\":{\"cpu_speed\":\"2.4GHz\"},\"jobs\":[{\"job\":\"3\",\"slots\":1,\"grants\":{\"node01\":"
        + "{\"gpu\":[\"0\"]}}}]}", "\"state\":{\"complex_values\":\"gpu=((\"}", "\"diffs\":[{\"event\":\"grant\","
        + "\"job\":\"3\"}]", "\"diffs\":[1]", "\"jobs\":{\"7\":{\"global\":{\"lic\":[\"la\"]}}}",
        "\"jobs\":{\"8\":{\"global\":{\"lic\":[\"zz\"]}}}", "\"cluster\":true", "\"x\":1"};
    private static Daemon authority;

    private static synchronized Daemon authority() throws Exception {
        if (authority == null) {
            Path dir = Files.createTempDirectory("rsmap-fuzz-authority");
            authority = TestDaemon.start(AuthorityTest.authorityConfig(dir, Ports.free(), "lic=2(la lb)"),
                    AuthorityTest.TOKENS);
        }
        return authority;
    }

    /** Any arguments of the authority's commands: one OK or ERROR, never an internal error, never a stack trace. */
    @FuzzTest
    void authorityCommands_anyArguments_oneOkOrError_neverInternal(FuzzedDataProvider data) throws Exception {
        Daemon d = authority();
        Session s = new Session((code, command, session) -> d.handle(code, command, session),
                new Session.Peer(data.consumeBoolean() ? "root" : "bob", "bob", data.consumeBoolean() ? 0 : 1001, 1001, 0));
        List<Frame> events = new ArrayList<>();
        s.attach((frame, force) -> events.add(frame));
        s.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
        Code code = data.pickValue(AUTHORITY_CODES);
        List<String> pieces = new ArrayList<>();
        for (int k = data.consumeInt(0, 5); k > 0; k--) {
            pieces.add(data.pickValue(AUTHORITY_PIECES));
        }
        String arg = data.consumeBoolean() ? "{" + String.join(",", pieces) + "}" : data.consumeString(400);
        List<Frame> answer = s.onCommand(Frame.of(2, code.value(), arg));
        assertThat(answer).isNotEmpty();
        Frame last = answer.get(answer.size() - 1);
        assertThat(last.code()).isIn(Code.OK.value(), Code.ERROR.value());
        if (last.code() == Code.ERROR.value()) {
            assertThat(last.text(0)).doesNotStartWith("internal error").doesNotContain("\n");
            assertThat(rsmap.wire.Category.of(last)).as(last.text(0)).isPresent();
        }
        s.end();
    }

    private static String state(Daemon d) {
        return Views.state(d.state(), d.access(), new Session.Peer("root", "root", 0, 0, 0), EventHub.Filters.NONE, null).toString();
    }
}
