// Test support: a scripted stand-in for rsmapd on a Unix socket, speaking the agent protocol's frames
// directly, so that the hook's side of a command can be tested whatever the real daemon implements yet.
package rsmap.daemon;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import rsmap.wire.Category;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.FrameDecoder;
import rsmap.wire.FrameException;
import rsmap.wire.Session;

final class FakeDaemon implements AutoCloseable {
    private final ServerSocketChannel server;
    private final Function<Frame, List<Frame>> script;
    private final Thread acceptor;
    /** Every command after INIT, in arrival order. */
    final List<Frame> received = new CopyOnWriteArrayList<>();

    /**
     * Answers INIT with OK and every other command with what {@code script} returns; an answer that does not
     * end in OK or ERROR is followed by hanging up, as a daemon that dies mid-answer.
     */
    FakeDaemon(Path socket, Function<Frame, List<Frame>> script) throws IOException {
        this.script = script;
        Files.deleteIfExists(socket);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        acceptor = new Thread(this::accept, "fake-rsmapd");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The events of a grant as rsmapd sends them: STATE (JSON, then NAME=value lines), then OK. */
    static List<Frame> granting(Frame command, String json, String... lines) {
        String[] args = new String[lines.length + 1];
        args[0] = json;
        System.arraycopy(lines, 0, args, 1, lines.length);
        return List.of(Frame.of(command.tid(), Code.STATE.value(), args), Session.ok(command.tid()));
    }

    static List<Frame> refusing(Frame command, String reason) {
        return refusing(command, reason, Category.REFUSED);
    }

    static List<Frame> refusing(Frame command, String reason, Category category) {
        return List.of(Session.error(command.tid(), reason, category));
    }

    private void accept() {
        while (server.isOpen()) {
            try (SocketChannel client = server.accept()) {
                serve(client);
            } catch (IOException | FrameException e) {
                // the client went away or sent garbage: the next one is served anyway
            }
        }
    }

    private void serve(SocketChannel client) throws IOException, FrameException {
        FrameDecoder decoder = new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME);
        ByteBuffer in = ByteBuffer.allocate(64 * 1024);
        while (true) {
            for (Optional<Frame> f = decoder.next(); f.isPresent(); f = decoder.next()) {
                Frame command = f.get();
                List<Frame> answer;
                if (command.code() == Code.INIT.value()) {
                    answer = List.of(Session.ok(command.tid()));
                } else {
                    received.add(command);
                    answer = script.apply(command);
                }
                for (Frame a : answer) {
                    ByteBuffer out = ByteBuffer.wrap(a.encode());
                    while (out.hasRemaining()) {
                        client.write(out);
                    }
                }
                int last = answer.isEmpty() ? -1 : answer.get(answer.size() - 1).code();
                if (last != Code.OK.value() && last != Code.ERROR.value()) {
                    return;
                }
            }
            in.clear();
            int n = client.read(in);
            if (n < 0) {
                return;
            }
            decoder.feed(in.array(), 0, n);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
