// The daemon and its protocol benchmark: the floor of a job start for a JVM server on this machine. What
// floor-rsmapd.c does, in Java with the JDK alone and bin/rsmapd's JVM options: accept, INIT answered, JOB_START
// and JOB_END each written to a journal (zero-filled ahead) and forced before the answer, STATE and OK sent, the
// job's environment file created after the answer (CREATE_NEW, 0400) or removed. No decision, no JSON, no selector. Beside
// floor-rsmapd and bin/rsmapd in hook-bench.sh, it says which part of rsmapd's cost over the C floor is the JVM's
// own and which is rsmapd's work (docs/benchmarks.md).
// Usage: java OPTIONS -cp bridge/target/test-classes rsmap.bench.JavaFloor SOCKET DIR [handoff]
// "handoff": every command goes from the accepting thread to one worker thread and back, as rsmapd's selector
// hands a job start to a worker.
package rsmap.bench;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.SynchronousQueue;

public final class JavaFloor {
    private static final int AHEAD = 1 << 20;
    private static final int INIT = 0x0001, JOB_START = 0x0010, OK = 0x8000, STATE = 0x8004;

    private final FileChannel journal;
    private final Path env;
    private long at;

    private JavaFloor(FileChannel journal, Path env) {
        this.journal = journal;
        this.env = env;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: JavaFloor SOCKET DIR [handoff]");
            System.exit(2);
        }
        Path dir = Path.of(args[1]);
        Files.createDirectories(dir.resolve("env"));
        FileChannel j = FileChannel.open(dir.resolve("journal"), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        j.write(ByteBuffer.allocate(AHEAD), 0);
        j.force(true);
        JavaFloor floor = new JavaFloor(j, dir.resolve("env"));
        Path socket = Path.of(args[0]);
        Files.deleteIfExists(socket);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        boolean handoff = args.length > 2 && args[2].equals("handoff");
        SynchronousQueue<Runnable> work = new SynchronousQueue<>();
        if (handoff) {
            Thread worker = new Thread(() -> {
                try {
                    for (;;) work.take().run();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "worker");
            worker.setDaemon(true);
            worker.start();
        }
        System.out.println("ready");
        System.out.flush();
        for (;;) {
            try (SocketChannel c = server.accept()) {
                floor.serve(c, handoff ? work : null);
            } catch (IOException e) {
                // the client went away: the next one
            }
        }
    }

    private void serve(SocketChannel c, SynchronousQueue<Runnable> work) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(8);
        for (;;) {
            head.clear();
            if (!readFully(c, head)) return;
            int len = hex(head.array(), 0, 8);
            if (len < 12 || len > 1 << 20) return;
            ByteBuffer frame = ByteBuffer.allocate(len);
            if (!readFully(c, frame)) return;
            byte[] f = frame.array();
            int tid = hex(f, 0, 8), code = hex(f, 8, 4);
            List<String> args = new ArrayList<>();
            int p = 12;
            while (p < len) {
                int q = p + 1;
                while (q < len && f[q] != ':') q++;
                int n = hex(f, p + 1, q - p - 1);
                args.add(new String(f, q + 1, n, StandardCharsets.UTF_8));
                p = q + 1 + n;
            }
            if (code == INIT) {
                send(c, tid, OK);
            } else if (work == null) {
                command(c, tid, code, args);
            } else {
                Object done = new Object();
                IOException[] failed = new IOException[1];
                boolean[] finished = new boolean[1];
                try {
                    work.put(() -> {
                        try {
                            command(c, tid, code, args);
                        } catch (IOException e) {
                            failed[0] = e;
                        }
                        synchronized (done) {
                            finished[0] = true;
                            done.notify();
                        }
                    });
                    synchronized (done) {
                        while (!finished[0]) done.wait();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (failed[0] != null) throw failed[0];
            }
        }
    }

    private void command(SocketChannel c, int tid, int code, List<String> args) throws IOException {
        String arg = args.isEmpty() ? "" : args.get(0);
        String id = jobOf(arg);
        byte[] record = String.format("%08x %s %s\n", code, id, arg).getBytes(StandardCharsets.UTF_8);
        if (at + record.length > AHEAD) at = 0; // round and round the zero-filled space: the same blocks
        journal.write(ByteBuffer.wrap(record), at);
        journal.force(false);
        at += record.length;
        Path file = env.resolve(id.isEmpty() ? "_" : id);
        if (code == JOB_START) {
            send(c, tid, STATE, "{\"grants\":{}}", "SGE_HGR_nic=ib0");
            send(c, tid, OK);
            try (FileChannel e = FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("r--------")))) {
                e.write(ByteBuffer.wrap("SGE_HGR_nic=ib0\n".getBytes(StandardCharsets.US_ASCII)));
            } catch (FileAlreadyExistsException e) {
                // as the C floor: an existing file stays
            }
        } else {
            Files.deleteIfExists(file);
            send(c, tid, OK);
        }
    }

    private static String jobOf(String arg) {
        int p = arg.indexOf("\"job\":\"");
        if (p < 0) return "";
        p += 7;
        int q = p;
        while (q < arg.length() && arg.charAt(q) != '"' && arg.charAt(q) != '/') q++;
        return arg.substring(p, q);
    }

    private static void send(SocketChannel c, int tid, int code, String... args) throws IOException {
        StringBuilder body = new StringBuilder();
        for (String a : args) body.append(' ').append(Integer.toHexString(a.length())).append(':').append(a);
        String frame = String.format("%08x%08x%04x", 12 + body.length(), tid, code) + body;
        ByteBuffer b = ByteBuffer.wrap(frame.getBytes(StandardCharsets.UTF_8));
        while (b.hasRemaining()) c.write(b);
    }

    private static boolean readFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) return false;
        }
        return true;
    }

    private static int hex(byte[] s, int from, int digits) {
        int v = 0;
        for (int i = from; i < from + digits; i++) v = v << 4 | Character.digit(s[i], 16);
        return v;
    }
}
