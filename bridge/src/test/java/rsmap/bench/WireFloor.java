// The daemon and its protocol benchmark: rsmapd's own socket server (rsmap.wire: the selector thread, the
// peer check, the frames, the hand-off to a worker) around the floor's work alone: JOB_START and JOB_END each
// written to a zero-filled journal and forced before the answer, STATE and OK, the job's environment file
// created (0400) once the answer is sent (Session.Handler#answered, as rsmapd) or removed. Beside JavaFloor (the same work with a blocking accept on one thread) and bin/rsmapd in
// hook-bench.sh, it says which part of rsmapd's cost over the floor is its server and which its decision.
// Usage: java OPTIONS -cp bridge/target/test-classes:bridge/target/rsmap.jar rsmap.bench.WireFloor SOCKET DIR
package rsmap.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import rsmap.wire.Category;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.SocketServer;

public final class WireFloor {
    private static final int AHEAD = 1 << 20;

    private WireFloor() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: WireFloor SOCKET DIR");
            System.exit(2);
        }
        Path dir = Path.of(args[1]);
        Path env = dir.resolve("env");
        Files.createDirectories(env);
        FileChannel journal = FileChannel.open(dir.resolve("journal"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        journal.write(ByteBuffer.allocate(AHEAD), 0);
        journal.force(true);
        long[] at = {0};
        Object lock = new Object();
        java.util.Queue<Path> due = new java.util.concurrent.ConcurrentLinkedQueue<>();
        Session.Handler handler = new Session.Handler() {
            @Override
            public List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
                return floor(code, command, journal, at, lock, env, due);
            }

            @Override
            public void answered(Session session) {
                for (Path file; (file = due.poll()) != null;) {
                    try (FileChannel e = FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW,
                            StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("r--------")))) {
                        e.write(ByteBuffer.wrap("SGE_HGR_nic=ib0\n".getBytes(StandardCharsets.US_ASCII)));
                    } catch (FileAlreadyExistsException e) {
                        // as the C floor: an existing file stays
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
            }
        };
        Path socket = Path.of(args[0]);
        Files.deleteIfExists(socket);
        try (SocketServer server = new SocketServer(socket, () -> handler, 1 << 20)) {
            System.out.println("ready");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE); // serves until the harness kills it
        }
    }

    /** The floor's work for one command: the record forced; a JOB_START's file left for after the answer. */
    private static List<Frame> floor(Code code, Frame command, FileChannel journal, long[] at, Object lock, Path env,
                                     java.util.Queue<Path> due) throws Session.CommandException {
        String arg = command.args().isEmpty() ? "" : command.text(0);
        int p = arg.indexOf("\"job\":\"");
        String id = p < 0 ? "_" : arg.substring(p + 7, arg.indexOf('"', p + 7));
        try {
            synchronized (lock) {
                byte[] record = (Integer.toHexString(code.value()) + " " + id + " " + arg + "\n")
                        .getBytes(StandardCharsets.UTF_8);
                if (at[0] + record.length > AHEAD) at[0] = 0;
                journal.write(ByteBuffer.wrap(record), at[0]);
                journal.force(false);
                at[0] += record.length;
            }
            Path file = env.resolve(id);
            if (code == Code.JOB_START) {
                due.add(file);
                return List.of(Frame.of(command.tid(), Code.STATE.value(), "{\"grants\":{}}", "SGE_HGR_nic=ib0"));
            }
            Files.deleteIfExists(file);
            return List.of();
        } catch (IOException e) {
            throw new Session.CommandException(Category.UNAVAILABLE, e.toString());
        }
    }
}
