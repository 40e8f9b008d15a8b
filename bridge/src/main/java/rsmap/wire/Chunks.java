// Fixed-size byte chunks that frame decoders hold their bytes in, recycled: a flood of partial frames
// then costs copies, not garbage (1 MiB buffers of shed connections ran the 64 MiB
// heap into a full collection every 60 ms).
package rsmap.wire;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A pool keeps at most {@code keep} free chunks; more are garbage when given back. Free chunks that no
 * one took during a whole period between two {@link #trim} calls are dropped, so a flood's memory is given
 * back once it is over. Thread-safe: the selector feeds decoders while workers take frames from them.
 */
final class Chunks {
    /** Bytes per chunk: small frames (the job path) fit in one. */
    static final int SIZE = 8 * 1024;

    private final int keep;
    private final ConcurrentLinkedQueue<byte[]> free = new ConcurrentLinkedQueue<>();
    private final AtomicInteger freeCount = new AtomicInteger();
    /** The fewest free chunks seen since the last trim: that many were never needed. */
    private final AtomicInteger lowWater = new AtomicInteger();

    Chunks(int keep) {
        this.keep = keep;
    }

    /** A pool of up to {@code bytes} bytes of free chunks. */
    static Chunks upTo(long bytes) {
        return new Chunks((int) Math.min(Integer.MAX_VALUE, bytes / SIZE));
    }

    byte[] take() {
        byte[] c = free.poll();
        if (c == null) {
            lowWater.set(0);
            return new byte[SIZE];
        }
        lowWater.accumulateAndGet(freeCount.decrementAndGet(), Math::min);
        return c;
    }

    void give(byte[] c) {
        if (freeCount.incrementAndGet() <= keep) {
            free.add(c);
        } else {
            freeCount.decrementAndGet();
        }
    }

    /** Drops the free chunks that were not needed since the last call. */
    void trim() {
        for (int n = lowWater.getAndSet(Integer.MAX_VALUE); n > 0 && free.poll() != null; n--) {
            freeCount.decrementAndGet();
        }
        lowWater.accumulateAndGet(freeCount.get(), Math::min);
    }

    int free() {
        return freeCount.get();
    }
}
