// The threads that execute the SocketServer's commands: one Work of a connection at a time, privileged
// peers' first (Work orders itself), each thread with its own direct buffer for answers.
package rsmap.wire;

import java.nio.ByteBuffer;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import rsmap.log.Log;

final class Workers {
    private final ThreadPoolExecutor pool;
    /** Arrival order of Work, behind privilege. */
    private final AtomicLong seq = new AtomicLong();

    /** A command (or bad frame) to execute, or the session's end, on a worker thread. */
    record Work(Connection connection, Frame frame, FrameException bad, long seq) implements Runnable, Comparable<Work> {
        @Override
        public void run() {
            try {
                connection.execute(this);
            } catch (RuntimeException e) { // never a connection left busy forever
                Log.report("worker failed on a connection", e);
                connection.failed();
            }
        }

        /** Privileged peers' commands first (root and the admin are never starved), then arrival order. */
        @Override
        public int compareTo(Work o) {
            // A connection's privilege changes only at its login, while its one Work (INIT) is out of the queue.
            if (connection.privileged() != o.connection.privileged()) {
                return connection.privileged() ? -1 : 1;
            }
            return Long.compare(seq, o.seq);
        }
    }

    /** A worker thread with its own direct buffer for writing answers. */
    static final class Worker extends Thread {
        final ByteBuffer direct = ByteBuffer.allocateDirect(SocketServer.BUFFER);

        Worker(Runnable r, String name) {
            super(r, name);
            setDaemon(true);
        }
    }

    Workers(int threads) {
        AtomicLong n = new AtomicLong();
        pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS,
                new PriorityBlockingQueue<>(), r -> new Worker(r, "rsmapd-worker-" + n.incrementAndGet()));
        pool.prestartAllCoreThreads(); // every Work goes through the queue, in its priority
    }

    /** {@code c}'s next Work (its next command, a bad frame, or its end), marked running; null when none is due. */
    Work take(Connection c) {
        return c.next(seq.incrementAndGet());
    }

    /** Queues a Work that {@link #take} gave, in its priority. */
    void run(Work w) {
        try {
            pool.execute(w);
        } catch (RejectedExecutionException e) {
            // the server is closing
        }
    }

    /** Queues {@code c}'s next command (or its end); false when it has nothing to run now. */
    boolean runNext(Connection c) {
        Work w = take(c);
        if (w == null) {
            return false;
        }
        run(w);
        return true;
    }

    void stop() {
        pool.shutdownNow();
        try {
            pool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
