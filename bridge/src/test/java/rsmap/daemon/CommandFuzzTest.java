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
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;

class CommandFuzzTest {
    private static final Code[] CODES = {Code.JOB_START, Code.JOB_END, Code.JOB_ENTER, Code.QUERY, Code.SET_FILTERS,
        Code.LIST_FILTERS, Code.MODEL_DEF, Code.START_EVENTS, Code.STOP_EVENTS, Code.RELOAD};
    private static Daemon daemon;

    private static synchronized Daemon daemon() throws Exception {
        if (daemon == null) {
            Path dir = Files.createTempDirectory("rsmap-fuzz");
            daemon = new Daemon(TestDaemon.config(dir, "gpu=4(0 0 1[numa_node=1] 1[numa_node=1]),nic=1(ib0)",
                    "reconcile_interval = 0"), rsmap.complex.ComplexTable.parse(Files.readString(dir.resolve("complexes"))));
        }
        return daemon;
    }

    @FuzzTest
    void anyArguments_oneOkOrError_neverInternal_andAnErrorChangesNothing(FuzzedDataProvider data) throws Exception {
        Daemon d = daemon();
        Session s = new Session((code, command, session) -> d.handle(code, command, session),
                new Session.Peer(data.consumeBoolean() ? "root" : "bob", "bob", data.consumeBoolean() ? 0 : 1001, 1001, 0));
        List<Frame> events = new ArrayList<>();
        s.attach((frame, force) -> events.add(frame));
        s.onCommand(Frame.of(1, Code.INIT.value(), Session.VERSION));
        Code code = data.pickValue(CODES);
        int n = data.consumeInt(0, 3);
        List<String> args = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            args.add(data.consumeString(400));
        }
        String before = state(d);
        List<Frame> answer = s.onCommand(Frame.of(2, code.value(), args.toArray(new String[0])));
        if (answer.isEmpty()) {
            assertThat(code).isEqualTo(Code.START_EVENTS); // the stream stays open
        } else {
            Frame last = answer.get(answer.size() - 1);
            assertThat(last.code()).isIn(Code.OK.value(), Code.ERROR.value());
            if (last.code() == Code.ERROR.value()) {
                assertThat(last.text(0)).doesNotStartWith("internal error").doesNotContain("\n");
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
    }

    private static String state(Daemon d) {
        return Views.state(d.state(), d.access(), new Session.Peer("root", "root", 0, 0, 0), EventHub.Filters.NONE, null).toString();
    }
}
