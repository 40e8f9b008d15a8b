// 500 concurrent clients, hostile frames mixed in: every well-formed call is answered, with its own TID.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManyClientsTest {
    @TempDir
    Path tmp;

    @Test
    void fiveHundredClients_withHostileOnesAmongThem_everyWellFormedCallIsAnswered() throws Exception {
        Session.Handler handler = (code, command, peer) -> List.of(Frame.of(command.tid(), Code.STATE.value(), "s"));
        try (SocketServer server = new SocketServer(tmp.resolve("s.sock"), () -> handler, 4096)) {
            ExecutorService pool = Executors.newFixedThreadPool(64);
            List<Future<Integer>> answered = new ArrayList<>();
            for (int c = 0; c < 500; c++) {
                int client = c;
                answered.add(pool.submit(() -> {
                    Random rnd = new Random(client);
                    try (TestClient t = new TestClient(server.path())) {
                        if (client % 5 == 0) { // hostile: garbage, an oversized length, or half a frame and gone
                            byte[] junk = new byte[1 + rnd.nextInt(64)];
                            rnd.nextBytes(junk);
                            t.send(client % 10 == 0 ? junk : "7fffffff".getBytes(StandardCharsets.US_ASCII));
                            return -1;
                        }
                        int ok = 0;
                        assertThat(t.call(Frame.of(1, Code.INIT.value(), "1"))).containsExactly(Session.ok(1));
                        for (long tid = 2; tid < 12; tid++) {
                            List<Frame> r = t.call(Frame.of(tid, Code.QUERY.value()));
                            assertThat(r).containsExactly(Frame.of(tid, Code.STATE.value(), "s"), Session.ok(tid));
                            ok++;
                        }
                        return ok;
                    }
                }));
            }
            int calls = 0;
            for (Future<Integer> f : answered) {
                calls += Math.max(0, f.get(60, TimeUnit.SECONDS));
            }
            pool.shutdown();
            assertThat(calls).isEqualTo(400 * 10);
        }
    }
}
