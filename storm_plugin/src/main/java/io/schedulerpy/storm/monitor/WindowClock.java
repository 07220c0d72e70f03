package io.schedulerpy.storm.monitor;

/**
 * Window arithmetic. Windows end on multiples of the window length since the epoch, so the records
 * of all workers of a cluster cover (nearly) the same intervals; a record's
 * {@code window_start_ms}/{@code window_end_ms} are the measured snapshot times (the loop wakes a
 * few ms after the boundary), and the first window of a worker is partial (it starts when the
 * monitor starts).
 */
final class WindowClock {
    private WindowClock() {
    }

    /** The first window boundary strictly after {@code nowMs}. */
    static long nextBoundary(long nowMs, long periodMs) {
        if (periodMs <= 0) {
            throw new IllegalArgumentException("period must be > 0: " + periodMs);
        }
        return Math.floorDiv(nowMs, periodMs) * periodMs + periodMs;
    }

    /** Milliseconds to sleep from {@code nowMs} until the next boundary (always in (0, period]). */
    static long delayToNextBoundary(long nowMs, long periodMs) {
        return nextBoundary(nowMs, periodMs) - nowMs;
    }

    /** Per-second rate of {@code amount} over [startMs, endMs); 0 for an empty interval. */
    static double perSecond(double amount, long startMs, long endMs) {
        long span = endMs - startMs;
        return span <= 0 ? 0.0 : amount * 1000.0 / span;
    }
}
