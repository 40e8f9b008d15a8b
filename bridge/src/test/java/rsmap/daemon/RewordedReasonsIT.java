// The hook's exit follows the category rsmapd gives, never its words: real refusals of a real rsmapd, seen once
// directly and once through a proxy that rewrites every ERROR's reason (reversed, or replaced by "x"), give
// the same exit codes - and the ones docs/protocol.md's table promises.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import rsmap.daemon.config.Config;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.FrameDecoder;
import rsmap.wire.FrameException;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
class RewordedReasonsIT {
    @RegisterExtension
    static final HookBuild build = new HookBuild("the hooks' build");
    Daemon daemon;
    Config config;

    @BeforeAll
    void start() throws Exception {
        config = TestDaemon.config(build.dir().resolve("d"), "gpu=2(0 1)", "socket_mode = 0666");
        daemon = TestDaemon.start(config);
    }

    @AfterAll
    void stop() throws Exception {
        if (daemon != null) {
            daemon.close();
        }
    }

    /**
     * A Unix-socket proxy in front of rsmapd: the client's bytes go through unchanged, the daemon's frames
     * too, except that every ERROR's reason is rewritten by {@code reword} (its category kept).
     */
    static final class Proxy implements AutoCloseable {
        final Path path;
        private final ServerSocketChannel listener;
        private final List<SocketChannel> open = new ArrayList<>();

        Proxy(Path path, Path daemon, UnaryOperator<String> reword) throws IOException {
            this.path = path;
            Files.deleteIfExists(path);
            listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(path));
            Thread accept = new Thread(() -> {
                while (listener.isOpen()) {
                    try {
                        SocketChannel client = listener.accept();
                        SocketChannel server = SocketChannel.open(UnixDomainSocketAddress.of(daemon));
                        synchronized (open) {
                            open.add(client);
                            open.add(server);
                        }
                        pump(client, server, Optional.empty());
                        pump(server, client, Optional.of(reword));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            accept.setDaemon(true);
            accept.start();
        }

        private static void pump(SocketChannel from, SocketChannel to, Optional<UnaryOperator<String>> reword) {
            Thread t = new Thread(() -> {
                FrameDecoder frames = new FrameDecoder(1 << 20);
                ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
                try {
                    while (from.read(buf.clear()) > 0) {
                        buf.flip();
                        if (reword.isEmpty()) {
                            to.write(buf);
                            continue;
                        }
                        frames.feed(buf);
                        for (Optional<Frame> f = frames.next(); f.isPresent(); f = frames.next()) {
                            Frame out = f.get();
                            if (out.code() == Code.ERROR.value()) {
                                List<String> args = new ArrayList<>();
                                for (int i = 0; i < out.args().size(); i++) {
                                    args.add(i == 0 ? reword.get().apply(out.text(0)) : out.text(i));
                                }
                                out = Frame.of(out.tid(), out.code(), args.toArray(String[]::new));
                            }
                            to.write(ByteBuffer.wrap(out.encode()));
                        }
                    }
                } catch (IOException | FrameException e) {
                    // the connection is over
                } finally {
                    try {
                        to.shutdownOutput();
                    } catch (IOException e) {
                        // gone already
                    }
                }
            });
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            listener.close();
            synchronized (open) {
                for (SocketChannel c : open) {
                    c.close();
                }
            }
            Files.deleteIfExists(path);
        }
    }

    /** The prolog's exit for job {@code job} asking {@code request} (and {@code filter}) through {@code socket}. */
    private int prolog(Path socket, String job, String request, String filter) throws Exception {
        Map<String, String> env = new HashMap<>(Map.of("JOB_ID", job, "SGE_TASK_ID", "undefined",
                "RSMAP_SOCKET", socket.toString(), "RSMAP_REQUEST", request, "USER", "root"));
        if (filter != null) {
            env.put("RSMAP_FILTER", filter);
        }
        return HookBuild.run(null, List.of(build.hook().toString(), "prolog"), env).code();
    }

    @Test
    void everyRefusalOfARealDaemon_reworded_keepsItsExitCode() throws Exception {
        // job 1 holds card 0 twice over: gpu=2[same=id] cannot be granted now (busy).
        assertThat(prolog(config.socket(), "1", "gpu=1[id=0]", null)).isZero();
        // request, expected exit (docs/protocol.md, "Error categories"): the refusals of a real rsmapd
        Object[][] cases = {
            {"gpu=1[scope=job]", null, 100},            // refused: the request does not parse
            {"fpga=1", null, 100},                      // refused: no such complex
            {"gpu=2[same=id]", null, 99},               // busy: cannot be granted now
            {"gpu=1", "cpu_speed >", 100},              // refused: the filter does not parse
            {"gpu=1", "arch == \"ppc64le\"", 99},       // busy: this host fails the job's filter
            {"gpu=1", "nosuch == 1", 99},               // busy: this host has no such attribute
        };
        List<UnaryOperator<String>> rewordings = List.of(
                r -> new StringBuilder(r).reverse().toString(),
                r -> "x",
                r -> "request: " + r,
                r -> "filter: job filter fails on " + r);
        int job = 10;
        for (Object[] c : cases) {
            String request = (String) c[0];
            String filter = (String) c[1];
            int direct = prolog(config.socket(), Integer.toString(job++), request, filter);
            assertThat(direct).as("%s %s directly", request, filter).isEqualTo(c[2]);
            for (UnaryOperator<String> reword : rewordings) {
                try (Proxy p = new Proxy(build.dir().resolve("run").resolve("proxy.sock"), config.socket(), reword)) {
                    assertThat(prolog(p.path, Integer.toString(job++), request, filter))
                            .as("%s %s, its reason reworded", request, filter).isEqualTo(direct);
                }
            }
        }
    }
}
