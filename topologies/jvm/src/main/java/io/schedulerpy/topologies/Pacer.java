package io.schedulerpy.topologies;

/**
 * Paces a spout executor to a rate: {@link #tryAcquire} says whether a tuple may be emitted now.
 * Rate 0 means unthrottled. When the spout was held back (by {@code topology.max.spout.pending}
 * or a slow consumer) it catches up with at most one second's worth of tuples, not with the whole
 * backlog at once.
 */
final class Pacer {
    private static final long SECOND_NANOS = 1_000_000_000L;

    private final long intervalNanos;
    private long next;

    /**
     * @param ratePerSecond tuples per second, 0 for unthrottled
     * @param nowNanos      the current {@link System#nanoTime()}
     */
    Pacer(double ratePerSecond, long nowNanos) {
        if (ratePerSecond < 0 || Double.isNaN(ratePerSecond)) {
            throw new IllegalArgumentException("rate must be >= 0 tuples/s, found " + ratePerSecond);
        }
        this.intervalNanos = ratePerSecond == 0 ? 0 : Math.max(1L, Math.round(SECOND_NANOS / ratePerSecond));
        this.next = nowNanos;
    }

    /** True (and one tuple's time is used up) when a tuple may be emitted at {@code nowNanos}. */
    boolean tryAcquire(long nowNanos) {
        if (intervalNanos == 0) {
            return true;
        }
        if (nowNanos - next < 0) {
            return false;
        }
        long earliest = nowNanos - Math.max(SECOND_NANOS, intervalNanos);
        next = Math.max(next, earliest) + intervalNanos;
        return true;
    }
}
