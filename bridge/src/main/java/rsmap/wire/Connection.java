// One client connection of the SocketServer: its session, the bytes of its partial frame, the frames
// waiting to go out, and the flags that keep its commands one at a time and its answers in order.
package rsmap.wire;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.List;
import rsmap.log.Log;

/**
 * Shared by the selector thread (reads, writes when the socket was full, timeouts, closing) and the
 * worker running its current command; every field below is guarded by {@code this}. Invariants: at
 * most one {@link Workers.Work} of a connection is queued or running ({@code busy}); frames go out in the
 * order they were queued; a dead connection queues nothing and reads nothing.
 */
final class Connection implements Session.Output, Session.Login {
    private final SocketServer server;
    final SocketChannel channel;
    final Session session;
    /** Null for a peer the kernel named (Unix socket); over TCP, how INIT's credential is judged. */
    private final TcpLogin tcp;
    /** Judged on the peer: at accept (Unix), or at login (TCP; false before). */
    private volatile boolean privileged;
    /** The per-uid bucket of an unprivileged peer; null for a privileged one, and over TCP before login. */
    private Object user;
    SelectionKey key;

    private final FrameDecoder decoder;
    private final Outgoing out;
    /** The share of the server's input total this decoder accounts for. */
    private long inputAccounted;
    /** A Workers.Work of this connection is queued or running. */
    private boolean busy;
    /** The client closed its side: finish what arrived, then end. */
    private boolean eof;
    /** Closed for good; the session may still have to be ended. */
    private boolean dead;
    /** Close once everything queued is written (after QUIT or a fatal frame). */
    private boolean closing;
    private boolean ended;
    /** OP_READ was taken off: a full frame waits behind the current command. */
    private boolean readPaused;
    private boolean writeWanted;
    /** Over TCP, from the accept until the login ended (it holds a place of ServerLimits#maxUnauthenticated). */
    private boolean awaitingLogin;
    /** Over TCP, the peer's address, whose places awaiting login this connection counts in (LoginPlaces). */
    private final java.net.InetAddress loginSource;
    private final long opened;
    private long lastActive;
    private long frameStarted;
    private long closeBy;

    /** A peer the kernel named (Unix socket), judged at accept. */
    Connection(SocketServer server, SocketChannel channel, Session session, boolean privileged, Object user,
               int maxFrame) {
        this.server = server;
        this.channel = channel;
        this.session = session;
        this.tcp = null;
        this.loginSource = null;
        this.privileged = privileged;
        this.user = user;
        this.decoder = new FrameDecoder(maxFrame, server.chunks());
        this.out = new Outgoing(server);
        this.opened = System.nanoTime();
        this.lastActive = opened;
        session.attach(this);
    }

    /** A TCP peer: no one, unprivileged and in no user's bucket until its INIT's credential is accepted. */
    Connection(SocketServer server, SocketChannel channel, Session.Handler handler, TcpLogin tcp, int maxFrame,
               java.net.InetAddress source) {
        this.server = server;
        this.channel = channel;
        this.session = new Session(handler, this);
        this.tcp = tcp;
        this.awaitingLogin = true;
        this.loginSource = source;
        this.decoder = new FrameDecoder(maxFrame, server.chunks());
        this.out = new Outgoing(server);
        this.opened = System.nanoTime();
        this.lastActive = opened;
        session.attach(this);
    }

    // ---- selector thread ----

    /** Reads what the socket has (once: other connections get their turn); -1 at end of stream. */
    int read(ByteBuffer direct) throws IOException {
        direct.clear();
        int n = channel.read(direct);
        synchronized (this) {
            if (n < 0 || dead) {
                eof = true;
                return -1;
            }
            direct.flip();
            if (decoder.buffered() == 0 && !busy) {
                frameStarted = System.nanoTime();
            }
            decoder.feed(direct);
            accountInput();
        }
        return n;
    }

    /** Whether reading should stop until the current command is done: a whole frame waits already. */
    synchronized boolean shouldPauseReading(int maxFrame) {
        if (!readPaused && !dead && decoder.buffered() >= Frame.LENGTH_DIGITS + maxFrame) {
            readPaused = true;
            return true;
        }
        return false;
    }

    synchronized long inputHeld() { return inputAccounted; }

    synchronized long outputHeld() { return out.bytes(); }

    /** What the timeout sweep should do now: null, or the reason to close the connection. */
    synchronized String expired(long now, long idleNanos, long frameNanos, long loginNanos) {
        if (dead) {
            return null;
        }
        if (closing) {
            return now - closeBy > 0 ? "" : null;
        }
        if (awaitingLogin && now - opened > loginNanos) {
            return "login"; // even while its credential is being checked: the place is given back on time
        }
        if (busy) {
            return null;
        }
        if (decoder.buffered() > 0) { // unless the next frame waits for the client to read its answers
            return frameNanos > 0 && now - frameStarted > frameNanos && out.bytes() <= server.pauseOutput() ? "frame"
                    : null;
        }
        if (idleNanos > 0 && out.isEmpty() && !eof && !session.hasOpenCommand() && now - lastActive > idleNanos) {
            return "idle";
        }
        return null;
    }

    /**
     * Marks the connection dead and gives back its buffers; true the first time. {@code last} (may be
     * null) is written first if the socket takes it at once and no frame is half written. The caller (the
     * selector thread) closes the channel; the session is ended by a worker through
     * {@link SocketServer#dispatch}.
     */
    synchronized boolean die(Frame last, ByteBuffer direct) {
        if (dead) {
            return false;
        }
        if (last != null && out.isEmpty()) {
            direct.clear();
            byte[] b = last.encode();
            direct.put(b, 0, Math.min(b.length, direct.capacity())).flip();
            try {
                channel.write(direct);
            } catch (IOException e) {
                // the client is gone: nothing to tell
            }
        }
        dead = true;
        out.clear();
        server.addInput(-inputAccounted);
        inputAccounted = 0;
        decoder.release();
        return true;
    }

    synchronized boolean dead() {
        return dead;
    }

    boolean privileged() {
        return privileged;
    }

    /** The per-uid bucket this connection counts in, or null; after {@link #die} it no longer changes. */
    synchronized Object user() {
        return user;
    }

    java.net.InetAddress loginSource() {
        return loginSource;
    }

    /** The login ended, or the connection died first: true once, for a TCP connection only. */
    synchronized boolean stopAwaitingLogin() {
        boolean was = awaitingLogin;
        awaitingLogin = false;
        return was;
    }

    /** Takes the judgment of a login; false (nothing taken) when the connection died meanwhile. */
    synchronized boolean adopt(boolean privileged, Object user) {
        if (dead) {
            return false;
        }
        this.privileged = privileged;
        this.user = user;
        return true;
    }

    /** INIT's credential, on the worker executing INIT (see {@link TcpLogin}). */
    @Override
    public Session.Peer login(String credential) throws Authenticator.Refused {
        return tcp.login(this, credential);
    }

    synchronized boolean closingAndFlushed() {
        return closing && out.isEmpty();
    }

    /** Called by the selector thread after OP_WRITE was set: clear the wish before flushing again. */
    synchronized void writeServed() {
        writeWanted = false;
    }

    // ---- any thread ----

    @Override
    public synchronized boolean clientClosed() {
        return eof || dead;
    }

    /**
     * The next piece of work, or null: the next command if none is running and the client reads its
     * answers; the session's end once the client is gone or the session over. Sets {@code busy}.
     */
    synchronized Workers.Work next(long seq) {
        if (busy || ended) {
            return null;
        }
        if (!dead && !session.closed() && out.bytes() <= server.pauseOutput()) {
            try {
                var frame = decoder.next();
                accountInput();
                if (frame.isPresent()) {
                    busy = true;
                    return new Workers.Work(this, frame.get(), null, seq);
                }
            } catch (FrameException e) {
                accountInput();
                busy = true;
                return new Workers.Work(this, null, e, seq);
            }
        }
        if (dead || session.closed() || eof && out.bytes() <= server.pauseOutput()) {
            busy = true; // ends the session (eof: every complete frame before it was answered)
            return new Workers.Work(this, null, null, seq);
        }
        return null;
    }

    /** Whether OP_READ should come back: reading was paused and there is room for the next frame. */
    synchronized boolean shouldResumeReading(int maxFrame) {
        if (readPaused && !dead && !eof && decoder.buffered() < Frame.LENGTH_DIGITS + maxFrame) {
            readPaused = false;
            return true;
        }
        return false;
    }

    /** Executes one Work on a worker thread, writes its answer, then hands the connection on. */
    void execute(Workers.Work w) {
        if (w.frame() == null && w.bad() == null) {
            session.end();
            synchronized (this) {
                ended = true;
            }
            server.closeWhenFlushed(this);
            return;
        }
        List<Frame> answer = w.frame() != null ? session.onCommand(w.frame()) : List.of(session.onBadFrame(w.bad()));
        offer(answer, true);
        server.flushFromWorker(this);
        session.answered();
        done();
        server.dispatch(this);
    }

    /**
     * On the selector thread: answers {@code w}'s command at once when the session can ({@link Session#quick}),
     * queued for the caller's {@link #flush}; false when it cannot, and {@code w} is still this connection's
     * running Work, for a worker.
     */
    boolean inline(Workers.Work w) {
        List<Frame> answer = null;
        try {
            answer = w.frame() == null ? null : session.quick(w.frame());
        } catch (RuntimeException e) { // it changed nothing: a worker answers it the long way
            Log.report("a command failed on the selector thread; a worker runs it", e);
        }
        if (answer == null) {
            return false;
        }
        offer(answer, true);
        done(); // before the write: a write error kills the connection, and its end must find it idle
        return true;
    }

    /** The running Work is answered: the next may go. */
    private synchronized void done() {
        busy = false;
        lastActive = System.nanoTime();
        if (decoder.buffered() > 0) {
            frameStarted = lastActive; // what follows was read while the command ran
        }
    }

    /** A Work failed outside the session's own handling. */
    void failed() {
        synchronized (this) {
            busy = false;
        }
        server.failed(this); // kills it, and then a worker ends its session
    }

    @Override
    public boolean post(Frame frame, boolean force) {
        if (!offer(List.of(frame), force)) {
            return false;
        }
        server.flushLater(this);
        return true;
    }

    /** Queues {@code frames} behind what was queued before; see {@link Session.Output#post}. */
    private boolean offer(List<Frame> frames, boolean force) {
        ByteBuffer[] encoded = new ByteBuffer[frames.size()];
        long size = 0;
        for (int i = 0; i < encoded.length; i++) {
            encoded[i] = ByteBuffer.wrap(frames.get(i).encode());
            size += encoded[i].remaining();
        }
        synchronized (this) {
            if (dead || ended) {
                return false;
            }
            if (!force && (out.bytes() + size > server.limits().maxEventBacklog()
                    || server.outputTotal() + size > server.limits().maxQueuedOutput())) {
                return false;
            }
            out.add(encoded, size);
        }
        return true;
    }

    /**
     * Writes what is queued through {@code direct} (this thread's buffer: heap buffers given to a channel
     * would each take a temporary direct buffer) until done or the socket is full; true when all is out.
     */
    synchronized boolean flush(ByteBuffer direct) throws IOException {
        return dead || out.writeTo(channel, direct);
    }

    /** Whether the selector must be asked for OP_WRITE (once until it served the wish). */
    synchronized boolean wantWrite() {
        if (writeWanted || dead) {
            return false;
        }
        writeWanted = true;
        return true;
    }

    /** After QUIT, a fatal frame or the end of the session: close once the queue is written (or in 2 s). */
    synchronized boolean startClosing(long graceNanos) {
        if (closing || dead) {
            return false;
        }
        closing = true;
        closeBy = System.nanoTime() + graceNanos;
        return true;
    }

    /** Brings the server's input total in line with this decoder's buffer. */
    private void accountInput() {
        long now = decoder.capacity();
        if (now != inputAccounted && !dead) {
            server.addInput(now - inputAccounted);
            inputAccounted = now;
        }
    }
}
