// The budget of the socket server: what any peer, local or over TCP, may hold
// of the daemon's memory, connections and time before it is refused, shed or timed out.
package rsmap.wire;

import java.time.Duration;

/**
 * One limits record for {@link SocketServer}. Unprivileged peers (neither root nor the admin user) are
 * bounded by every field; privileged peers are exempt from {@code perUserConnections} and are never shed,
 * but their bytes count towards the totals.
 *
 * @param maxFrame           largest frame accepted, LENGTH excluded (1 MiB)
 * @param perUserConnections open connections one unprivileged uid may hold; the next is answered one ERROR
 *                           (TID 0) and closed
 * @param maxBufferedInput   bytes of partly received frames held for all connections together; beyond it
 *                           the unprivileged connection holding most is closed, repeatedly
 * @param maxQueuedOutput    bytes waiting to be written to all connections together; beyond it events are
 *                           refused to streams and the unprivileged connection with most waiting is closed
 * @param maxEventBacklog    bytes of events that may wait for one slow reader before its stream is dropped
 *                           (16 MiB)
 * @param idleTimeout        a connection with no command in flight, no open stream, no partial frame and
 *                           nothing to write is closed after this; {@link Duration#ZERO}: never
 * @param frameTimeout       a frame begun must be complete within this; {@link Duration#ZERO}: no limit
 * @param workers            threads that execute commands (the selector answers only what needs none: Session#quick)
 * @param maxUnauthenticated TCP connections whose INIT has not been accepted yet, all peers together, and a
 *                           sixteenth of it from one source address ({@link LoginPlaces}); the next connect
 *                           over either is answered one ERROR (TID 0) and closed
 * @param loginTimeout       a TCP connection must have its INIT accepted within this of its connect, or it is
 *                           closed; never off, or {@code maxUnauthenticated} silent connects would shut out
 *                           every host
 */
public record ServerLimits(int maxFrame, int perUserConnections, long maxBufferedInput, long maxQueuedOutput,
                           long maxEventBacklog, Duration idleTimeout, Duration frameTimeout, int workers,
                           int maxUnauthenticated, Duration loginTimeout) {
    public static final int DEFAULT_PER_USER_CONNECTIONS = 32;
    public static final long DEFAULT_MAX_BUFFERED_INPUT = 16L << 20;
    public static final long DEFAULT_MAX_QUEUED_OUTPUT = 16L << 20;
    public static final long DEFAULT_MAX_EVENT_BACKLOG = 16L << 20;
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(5);
    public static final Duration DEFAULT_FRAME_TIMEOUT = Duration.ofSeconds(10);
    public static final int DEFAULT_WORKERS = 4;
    public static final int DEFAULT_MAX_UNAUTHENTICATED = 1024;
    public static final Duration DEFAULT_LOGIN_TIMEOUT = Duration.ofSeconds(5);

    public ServerLimits {
        if (maxFrame < Frame.HEADER) {
            throw new IllegalArgumentException("maxFrame " + maxFrame + " is below the frame header of " + Frame.HEADER
                    + " bytes");
        }
        if (perUserConnections < 1) {
            throw new IllegalArgumentException("perUserConnections " + perUserConnections + " is not at least 1");
        }
        // One frame of the maximum size must fit, or an unprivileged client could never send one.
        if (maxBufferedInput < (long) Frame.LENGTH_DIGITS + maxFrame) {
            throw new IllegalArgumentException("maxBufferedInput " + maxBufferedInput + " is below one frame of maxFrame "
                    + maxFrame + " bytes");
        }
        if (maxQueuedOutput < 1 || maxEventBacklog < 1) {
            throw new IllegalArgumentException("maxQueuedOutput and maxEventBacklog must be positive, not "
                    + maxQueuedOutput + " and " + maxEventBacklog);
        }
        for (Duration d : new Duration[] {idleTimeout, frameTimeout}) {
            if (d == null || d.isNegative()) {
                throw new IllegalArgumentException("idleTimeout and frameTimeout must be zero (off) or positive, not "
                        + idleTimeout + " and " + frameTimeout);
            }
        }
        if (workers < 1 || workers > 256) {
            throw new IllegalArgumentException("workers " + workers + " is not between 1 and 256");
        }
        if (maxUnauthenticated < 1) {
            throw new IllegalArgumentException("maxUnauthenticated " + maxUnauthenticated + " is not at least 1");
        }
        if (loginTimeout == null || loginTimeout.isNegative() || loginTimeout.isZero()) {
            throw new IllegalArgumentException("loginTimeout must be positive, not " + loginTimeout);
        }
    }

    /** The limits of a server without TCP (before the authority): the TCP fields at their defaults. */
    public ServerLimits(int maxFrame, int perUserConnections, long maxBufferedInput, long maxQueuedOutput,
                        long maxEventBacklog, Duration idleTimeout, Duration frameTimeout, int workers) {
        this(maxFrame, perUserConnections, maxBufferedInput, maxQueuedOutput, maxEventBacklog, idleTimeout,
                frameTimeout, workers, DEFAULT_MAX_UNAUTHENTICATED, DEFAULT_LOGIN_TIMEOUT);
    }

    /** The defaults for frames of at most {@code maxFrame} bytes. */
    public static ServerLimits defaults(int maxFrame) {
        return new ServerLimits(maxFrame, DEFAULT_PER_USER_CONNECTIONS,
                Math.max(DEFAULT_MAX_BUFFERED_INPUT, 2L * (Frame.LENGTH_DIGITS + (long) maxFrame)),
                DEFAULT_MAX_QUEUED_OUTPUT, DEFAULT_MAX_EVENT_BACKLOG,
                DEFAULT_IDLE_TIMEOUT, DEFAULT_FRAME_TIMEOUT, DEFAULT_WORKERS);
    }

    /** The defaults for {@link FrameDecoder#DEFAULT_MAX_FRAME}. */
    public static ServerLimits defaults() {
        return defaults(FrameDecoder.DEFAULT_MAX_FRAME);
    }

    public ServerLimits withPerUserConnections(int n) {
        return new ServerLimits(maxFrame, n, maxBufferedInput, maxQueuedOutput, maxEventBacklog,
                idleTimeout, frameTimeout, workers, maxUnauthenticated, loginTimeout);
    }

    public ServerLimits withMaxBufferedInput(long bytes) {
        return new ServerLimits(maxFrame, perUserConnections, bytes, maxQueuedOutput, maxEventBacklog,
                idleTimeout, frameTimeout, workers, maxUnauthenticated, loginTimeout);
    }

    public ServerLimits withMaxQueuedOutput(long bytes) {
        return new ServerLimits(maxFrame, perUserConnections, maxBufferedInput, bytes, maxEventBacklog,
                idleTimeout, frameTimeout, workers, maxUnauthenticated, loginTimeout);
    }

    public ServerLimits withMaxEventBacklog(long bytes) {
        return new ServerLimits(maxFrame, perUserConnections, maxBufferedInput, maxQueuedOutput, bytes,
                idleTimeout, frameTimeout, workers, maxUnauthenticated, loginTimeout);
    }

    public ServerLimits withIdleTimeout(Duration d) {
        return new ServerLimits(maxFrame, perUserConnections, maxBufferedInput, maxQueuedOutput, maxEventBacklog,
                d, frameTimeout, workers, maxUnauthenticated, loginTimeout);
    }

    public ServerLimits withFrameTimeout(Duration d) {
        return new ServerLimits(maxFrame, perUserConnections, maxBufferedInput, maxQueuedOutput, maxEventBacklog,
                idleTimeout, d, workers, maxUnauthenticated, loginTimeout);
    }

    public ServerLimits withWorkers(int n) {
        return new ServerLimits(maxFrame, perUserConnections, maxBufferedInput, maxQueuedOutput, maxEventBacklog,
                idleTimeout, frameTimeout, n, maxUnauthenticated, loginTimeout);
    }

    public ServerLimits withMaxUnauthenticated(int n) {
        return new ServerLimits(maxFrame, perUserConnections, maxBufferedInput, maxQueuedOutput, maxEventBacklog,
                idleTimeout, frameTimeout, workers, n, loginTimeout);
    }

    public ServerLimits withLoginTimeout(Duration d) {
        return new ServerLimits(maxFrame, perUserConnections, maxBufferedInput, maxQueuedOutput, maxEventBacklog,
                idleTimeout, frameTimeout, workers, maxUnauthenticated, d);
    }
}
