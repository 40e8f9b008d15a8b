// Simulated host daemons for the TCP tests and benchmark: a child JVM that holds N logged-in TCP
// connections to one server on two threads, then sends a trivial command at a steady rate over all of them.
package rsmap.wire;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A child of its own because one process cannot hold both ends of 10,000 connections under this
 * machine's {@code ulimit -n} of 20,000. Args: {@code HOST PORT CONNECTIONS RATE SECONDS CREDENTIAL [MODE]};
 * each connection logs in with {@code INIT 1 "CREDENTIAL <i>"}. MODE {@code query} (the default) sends
 * QUERY; {@code grant} sends an authority's global grant, JOB_START {@code {"host":"h<c>","job":"<i>",
 * "request":"lic=1"}}, and once it is answered its JOB_END (not timed). Protocol on stdout/stdin, one line each:
 * {@code ready connections=N ms=M} once all are logged in (or {@code failed REASON}, exit 1); on a stdin
 * line {@code go}, RATE QUERY commands per second for SECONDS, round robin over the connections, then
 * {@code done sent= answered= errors= closed= p50_us= p99_us= p999_us= max_us= late=}; stdin closed:
 * exit. Latency runs from each command's write to its OK; {@code late} counts writes more than 1 ms
 * behind their schedule (the generator's own health).
 */
public final class TcpHosts {
    /** Connects in flight at once: below the server's listen backlog, so that no SYN waits for a retransmit. */
    private static final int CONNECTS_IN_FLIGHT = 256;
    /** TIDs of the load: command i has TID FIRST_TID + i (INIT is TID 1). */
    private static final long FIRST_TID = 1000;

    private final InetSocketAddress server;
    private final Selector selector = Selector.open();
    private final List<SocketChannel> hosts = new ArrayList<>();
    private final ByteBuffer in = ByteBuffer.allocateDirect(64 * 1024);
    private volatile AtomicLongArray sentAt = new AtomicLongArray(0);
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong closed = new AtomicLong();
    private volatile long[] latencies = new long[0];
    /** Global grants instead of QUERY (see the class comment). */
    private boolean grants;

    private TcpHosts(InetSocketAddress server) throws IOException {
        this.server = server;
    }

    public static void main(String[] args) throws Exception {
        TcpHosts h = new TcpHosts(new InetSocketAddress(args[0], Integer.parseInt(args[1])));
        int n = Integer.parseInt(args[2]);
        int rate = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        long t0 = System.nanoTime();
        h.grants = args.length > 6 && args[6].equals("grant");
        Optional<String> failed = h.logIn(n, args[5]);
        if (failed.isPresent()) {
            System.out.println("failed " + failed.get());
            System.exit(1);
        }
        System.out.println("ready connections=" + n + " ms=" + (System.nanoTime() - t0) / 1_000_000);
        Thread reader = new Thread(h::read, "tcp-hosts-reader");
        reader.setDaemon(true);
        reader.start();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = stdin.readLine(); line != null; line = stdin.readLine()) {
            if (line.equals("go")) {
                System.out.println(h.load(rate, seconds));
            }
        }
        System.exit(0);
    }

    /** Opens {@code n} connections, a few hundred connects at a time, and logs each in; empty when all are in. */
    private Optional<String> logIn(int n, String credential) throws IOException {
        int opened = 0;
        int loggedIn = 0;
        int inFlight = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (loggedIn < n) {
            while (opened < n && inFlight < CONNECTS_IN_FLIGHT) {
                SocketChannel ch = SocketChannel.open();
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                if (server.getAddress().isLoopbackAddress()) { // each host from an address of its own, as in a cluster
                    int a = opened + 1;
                    ch.bind(new java.net.InetSocketAddress(java.net.InetAddress.getByAddress(new byte[] {127, 1,
                            (byte) (a >> 8), (byte) a}), 0));
                }
                ch.connect(server);
                ch.register(selector, SelectionKey.OP_CONNECT, new Object[] {new FrameDecoder(4096), credential + " "
                        + opened});
                hosts.add(ch);
                opened++;
                inFlight++;
            }
            if (System.nanoTime() - deadline > 0) {
                return Optional.of("only " + loggedIn + " of " + n + " logged in within 120 s");
            }
            selector.select(1000);
            for (SelectionKey key : selector.selectedKeys()) {
                SocketChannel ch = (SocketChannel) key.channel();
                Object[] state = (Object[]) key.attachment();
                try {
                    if (key.isConnectable() && ch.finishConnect()) {
                        ch.write(ByteBuffer.wrap(Frame.of(1, Code.INIT.value(), Session.VERSION, (String) state[1])
                                .encode()));
                        key.interestOps(SelectionKey.OP_READ);
                    } else if (key.isReadable()) {
                        Optional<Frame> f = readOne(ch, (FrameDecoder) state[0]);
                        if (f.isPresent()) {
                            if (!f.get().equals(Session.ok(1))) {
                                return Optional.of("connection " + state[1] + " answered " + f.get().args().stream()
                                        .map(b -> new String(b, StandardCharsets.UTF_8)).toList());
                            }
                            key.attach(state[0]);
                            key.interestOps(0);
                            loggedIn++;
                            inFlight--;
                        }
                    }
                } catch (IOException | FrameException e) {
                    return Optional.of("connection " + state[1] + ": " + e);
                }
            }
            selector.selectedKeys().clear();
        }
        for (SelectionKey key : selector.keys()) {
            key.interestOps(SelectionKey.OP_READ);
        }
        return Optional.empty();
    }

    /** Reads what {@code ch} has into {@code d}; its next frame, if one is complete. */
    private Optional<Frame> readOne(SocketChannel ch, FrameDecoder d) throws IOException, FrameException {
        Optional<Frame> f = d.next();
        if (f.isPresent()) {
            return f;
        }
        in.clear();
        if (ch.read(in) < 0) {
            throw new IOException("closed by the server");
        }
        in.flip();
        d.feed(in);
        return d.next();
    }

    /** The reader thread: every answer of the load, timed at its OK. */
    private void read() {
        try {
            while (selector.isOpen()) {
                selector.select(key -> {
                    SocketChannel ch = (SocketChannel) key.channel();
                    FrameDecoder d = (FrameDecoder) key.attachment();
                    try {
                        in.clear();
                        if (ch.read(in) < 0) {
                            throw new IOException("closed");
                        }
                        in.flip();
                        d.feed(in);
                        for (Optional<Frame> f = d.next(); f.isPresent(); f = d.next()) {
                            answer(f.get(), System.nanoTime());
                            if (grants && f.get().code() == Code.OK.value()) {
                                end(ch, f.get().tid());
                            }
                        }
                    } catch (IOException | FrameException e) {
                        closed.incrementAndGet();
                        key.cancel();
                    }
                });
            }
        } catch (IOException e) {
            // closing
        }
    }

    /** The JOB_END of the global grant whose OK came: TIDs above the load's are not timed. */
    private void end(SocketChannel ch, long tid) throws IOException {
        int i = (int) (tid - FIRST_TID);
        if (i < 0 || i >= sentAt.length()) {
            return;
        }
        ByteBuffer b = ByteBuffer.wrap(Frame.of(FIRST_TID + sentAt.length() + i, Code.JOB_END.value(),
                "{\"host\":\"h" + (i % hosts.size()) + "\",\"job\":\"" + i + "\"}").encode());
        ch.write(b);
    }

    private Frame command(int i) {
        if (!grants) {
            return Frame.of(FIRST_TID + i, Code.QUERY.value());
        }
        return Frame.of(FIRST_TID + i, Code.JOB_START.value(), "{\"host\":\"h" + (i % hosts.size()) + "\",\"job\":\""
                + i + "\",\"user\":\"bench\",\"request\":\"lic=1\"}");
    }

    private void answer(Frame f, long now) {
        int i = (int) (f.tid() - FIRST_TID);
        AtomicLongArray sent = sentAt;
        if (i < 0 || i >= sent.length()) {
            return;
        }
        if (f.code() == Code.OK.value()) {
            latencies[i] = (now - sent.get(i)) / 1000;
            answered.incrementAndGet();
        } else if (f.code() == Code.ERROR.value()) {
            errors.incrementAndGet();
        }
    }

    /** {@code rate} commands a second for {@code seconds}, each on the next connection; the figures line. */
    private String load(int rate, int seconds) throws InterruptedException {
        int total = rate * seconds;
        long[] lat = new long[total];
        Arrays.fill(lat, -1);
        latencies = lat;
        sentAt = new AtomicLongArray(total);
        answered.set(0);
        errors.set(0);
        long period = 1_000_000_000L / rate;
        long start = System.nanoTime();
        int late = 0;
        for (int i = 0; i < total; i++) {
            long due = start + i * period;
            for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                LockSupport.parkNanos(wait);
            }
            long now = System.nanoTime();
            late += now - due > 1_000_000 ? 1 : 0;
            SocketChannel ch = hosts.get(i % hosts.size());
            ByteBuffer b = ByteBuffer.wrap(command(i).encode());
            sentAt.set(i, now);
            try {
                ch.write(b);
                if (b.hasRemaining()) {
                    errors.incrementAndGet(); // a socket buffer full of 20-byte frames: the server stopped reading
                }
            } catch (IOException e) {
                errors.incrementAndGet();
            }
        }
        Polls.await(Duration.ofSeconds(30), () -> answered.get() + errors.get() >= total);
        long[] got = Arrays.stream(lat).filter(l -> l >= 0).sorted().toArray();
        return String.format("done sent=%d answered=%d errors=%d closed=%d p50_us=%d p99_us=%d p999_us=%d max_us=%d"
                + " late=%d", total, got.length, errors.get(), closed.get(), pct(got, 500), pct(got, 990),
                pct(got, 999), pct(got, 1000), late);
    }

    private static long pct(long[] sorted, int permille) {
        return sorted.length == 0 ? -1
                : sorted[Math.min(sorted.length - 1, (int) ((long) sorted.length * permille / 1000))];
    }
}
