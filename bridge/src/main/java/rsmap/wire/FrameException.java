// A frame that cannot be read: what was wrong, and whether the stream can still be delimited after it.
package rsmap.wire;

/**
 * A malformed or oversized frame. When {@link #fatal()} the byte stream cannot be delimited any more
 * (the LENGTH field itself is bad or too large) and the connection must be closed after the ERROR
 * answer; otherwise the bad frame has been skipped whole and the next one decodes normally.
 */
public final class FrameException extends Exception {
    private static final long serialVersionUID = 1L;

    private final boolean fatal;
    private final long tid;

    FrameException(String message, boolean fatal, long tid) {
        super(message, null, false, false);
        this.fatal = fatal;
        this.tid = tid;
    }

    public boolean fatal() {
        return fatal;
    }

    /** The frame's TID where it could be read, else 0, so the ERROR event can carry it. */
    public long tid() {
        return tid;
    }
}
