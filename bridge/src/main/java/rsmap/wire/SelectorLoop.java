// The selector thread of the SocketServer: reads and writes for every connection through its one direct
// buffer, answers what needs no worker, runs what other threads hand it, closes connections, and checks
// the Budget every tick.
package rsmap.wire;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import rsmap.log.Log;

/**
 * No thread or buffer belongs to a connection: this thread reads into its one direct
 * buffer (heap buffers given to a channel take a temporary direct buffer per thread) and copies into the
 * connection's decoder. Other threads never touch a key: they hand work here through the methods of the
 * "any thread" section.
 */
final class SelectorLoop {
    /** How often timeouts are checked and output is shed; also how long the acceptor pauses after an error. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long TRIM_NANOS = TimeUnit.SECONDS.toNanos(10);
    /**
     * Connections whose timeouts one tick checks. Checking all of 10,000 took this thread 4 to 9 ms of
     * every 100 (C1, a 2-core machine): the p99 of every command, waiting behind it. A slice
     * bounds that to well under a millisecond; a timeout is then noticed within ceil(open / SWEEP_SLICE)
     * ticks, one with up to 1,024 connections open, a second with 10,000.
     */
    static final int SWEEP_SLICE = 1024;

    private final SocketServer server;
    private final Budget budget;
    private final Selector selector;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Runnable> pending = new ConcurrentLinkedQueue<>();
    private volatile boolean running = true;

    // Owned by the selector thread.
    private final Set<Connection> connections = new LinkedHashSet<>();
    private final ByteBuffer direct = ByteBuffer.allocateDirect(SocketServer.BUFFER);
    /** Listeners whose accept failed, asked again at the next tick. */
    private final List<SelectionKey> paused = new ArrayList<>();
    /** The round of the timeout sweep: the connections open when it began, checked a slice a tick. */
    private List<Connection> sweep = List.of();
    private int swept;

    SelectorLoop(SocketServer server, Budget budget) throws IOException {
        this.server = server;
        this.budget = budget;
        this.selector = Selector.open();
        this.thread = new Thread(this::loop, "rsmapd-selector");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Ends the loop (it closes every connection and the selector) and waits for it a while. */
    void stop() {
        running = false;
        selector.wakeup();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- the selector thread ----

    private void loop() {
        long lastSweep = System.nanoTime();
        long lastTrim = lastSweep;
        try {
            while (running) {
                selector.select(this::ready, TimeUnit.NANOSECONDS.toMillis(TICK_NANOS));
                for (Runnable r = pending.poll(); r != null; r = pending.poll()) {
                    try {
                        r.run();
                    } catch (RuntimeException e) {
                        // one connection's trouble (a key cancelled under it): the loop serves the others
                        Log.report("selector task failed", e);
                    }
                }
                long now = System.nanoTime();
                if (now - lastSweep >= TICK_NANOS) {
                    lastSweep = now;
                    for (SelectionKey k : paused) {
                        if (k.isValid()) {
                            k.interestOps(SelectionKey.OP_ACCEPT);
                        }
                    }
                    paused.clear();
                    sweep(now);
                    budget.shedOutput(connections, this::kill);
                }
                if (now - lastTrim >= TRIM_NANOS) {
                    lastTrim = now;
                    server.chunks().trim();
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            // the server is closing
        } finally {
            for (Connection c : new ArrayList<>(connections)) {
                kill(c, null);
            }
            try {
                selector.close();
            } catch (IOException e) {
                // closing: nothing more to do
            }
            drainStopped();
        }
    }

    /** Checks the next slice of the round for timeouts; a new round once one ends (see {@link #SWEEP_SLICE}). */
    private void sweep(long now) {
        if (swept >= sweep.size()) {
            sweep = new ArrayList<>(connections); // who closes meanwhile is skipped: expired() is null when dead
            swept = 0;
        }
        int end = Math.min(sweep.size(), swept + SWEEP_SLICE);
        budget.closeExpired(now, sweep.subList(swept, end), this::kill);
        swept = end;
    }

    /** One ready key, handled once per round so that every connection gets its turn. */
    private void ready(SelectionKey key) {
        if (key.attachment() instanceof Admission door) { // the Unix socket's listener
            if (!door.acceptReady() && key.isValid()) {
                key.interestOps(0); // accept failed: asked again at the next tick
                paused.add(key);
            }
            return;
        }
        Connection c = (Connection) key.attachment();
        serve(c, () -> {
            if (key.isValid() && key.isWritable()) {
                writable(c);
            }
            if (key.isValid() && key.isReadable()) {
                readable(c);
            }
        });
    }

    /** What the selector does for one connection: a read, a write. */
    private interface Step {
        void run() throws IOException;
    }

    /** Runs {@code step} of {@code c}: a client gone, or a step that broke something, closes it; the loop goes on. */
    private void serve(Connection c, Step step) {
        try {
            step.run();
        } catch (IOException e) {
            kill(c, null); // the client is gone
        } catch (RuntimeException e) {
            Log.report("connection failed on the selector", e);
            kill(c, null);
        }
    }

    private void readable(Connection c) throws IOException {
        int n = c.read(direct);
        // Before a command goes to a worker, once more: an end of stream right behind it (a client that sent
        // it and closed) is then known before it runs (Session#gone). One answered here needs no such look.
        server.dispatchInline(c, direct, n > 0 && n < direct.capacity() ? () -> c.read(direct) : null);
        if (!c.key.isValid()) {
            return;
        }
        if (c.clientClosed()) {
            c.key.interestOpsAnd(~SelectionKey.OP_READ);
        } else if (c.shouldPauseReading(server.limits().maxFrame())) {
            c.key.interestOpsAnd(~SelectionKey.OP_READ);
        }
        budget.shedInput(connections, this::kill);
    }

    private void writable(Connection c) throws IOException {
        c.writeServed();
        if (c.flush(direct)) {
            c.key.interestOpsAnd(~SelectionKey.OP_WRITE);
            if (c.closingAndFlushed()) {
                kill(c, null);
            } else {
                server.dispatchInline(c, direct, null); // the next command may have waited for the client to read
            }
        } else {
            c.key.interestOpsOr(SelectionKey.OP_WRITE);
        }
    }

    /**
     * Closes {@code c} now, after one best-effort ERROR with TID 0 giving {@code reason} (unless null, or
     * a frame is half written); a worker then ends its session.
     */
    private void kill(Connection c, String reason) {
        if (!c.die(reason == null ? null : Session.error(0, reason, Category.BUSY), direct)) {
            return;
        }
        connections.remove(c);
        Object user = c.user();
        if (user != null) {
            budget.release(user);
        }
        if (c.stopAwaitingLogin()) {
            budget.loginEnded(c.loginSource());
        }
        if (c.key != null) {
            c.key.cancel();
        }
        try {
            c.channel.close();
        } catch (IOException e) {
            // already gone
        }
        server.dispatch(c);
    }

    // ---- any thread ----

    /** The Unix socket's listener joins the selector: its connections are accepted here ({@link Admission#acceptReady}). */
    void listen(java.nio.channels.ServerSocketChannel listener, Admission door) {
        onSelector(() -> {
            try {
                listener.register(selector, SelectionKey.OP_ACCEPT, door);
            } catch (ClosedSelectorException | IOException e) {
                // the server is closing, or its listener closed
            }
        });
    }

    /**
     * An admitted connection joins the selector. Accepted on this thread, it is read at once: a hook
     * writes its commands right behind its connect, and they are mostly there already.
     */
    void register(Connection c) {
        boolean acceptedHere = Thread.currentThread() == thread;
        onSelector(() -> {
            try {
                c.key = c.channel.register(selector, SelectionKey.OP_READ, c);
                connections.add(c);
                if (acceptedHere) { // read without waiting for the selector to say so
                    serve(c, () -> readable(c));
                }
            } catch (ClosedSelectorException e) {
                kill(c, null); // accepted while the server closed: the peer learns at once, not at its timeout
            } catch (IOException e) {
                kill(c, null);
            } catch (RuntimeException e) {
                Log.report("cannot register a connection", e);
                kill(c, null);
            }
        });
    }

    /** Reading was paused and there is room again for the next frame. */
    void resumeReading(Connection c) {
        onSelector(() -> {
            if (c.key.isValid()) {
                c.key.interestOpsOr(SelectionKey.OP_READ);
            }
        });
    }

    /** The selector writes {@code c}'s queue when the socket can take it. */
    void writeWhenWritable(Connection c) {
        onSelector(() -> {
            if (c.key.isValid()) {
                c.key.interestOpsOr(SelectionKey.OP_WRITE);
            }
        });
    }

    /** Closes {@code c} at the selector's next round, telling the peer nothing. */
    void close(Connection c) {
        onSelector(() -> kill(c, null));
    }

    /** Output went over the budget: shed at the next round rather than waiting for the tick. */
    void shedOutput() {
        onSelector(() -> budget.shedOutput(connections, this::kill));
    }

    /** Runs {@code r} on the selector thread: now if this is it, else at its next round. */
    private void onSelector(Runnable r) {
        if (Thread.currentThread() == thread) {
            r.run();
        } else {
            pending.add(r);
            selector.wakeup();
            if (!running && !thread.isAlive()) {
                drainStopped(); // the loop ended: nobody else runs what is queued (a connection accepted late)
            }
        }
    }

    /** After the loop ended: runs what was queued for it; a connection's registration then closes it. */
    private void drainStopped() {
        for (Runnable r = pending.poll(); r != null; r = pending.poll()) {
            try {
                r.run();
            } catch (RuntimeException e) {
                // the server is closed
            }
        }
    }
}
