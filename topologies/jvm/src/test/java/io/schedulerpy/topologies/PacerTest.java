package io.schedulerpy.topologies;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PacerTest {
    private static final long MS = 1_000_000L;

    /** How many of {@code attempts} calls, spread evenly over {@code millis}, are granted. */
    private static int granted(Pacer pacer, long startNanos, long millis, int attempts) {
        int count = 0;
        for (int i = 0; i < attempts; i++) {
            if (pacer.tryAcquire(startNanos + i * millis * MS / attempts)) {
                count++;
            }
        }
        return count;
    }

    @Test
    void unthrottledAlwaysGrants() {
        Pacer pacer = new Pacer(0, 0);
        assertEquals(10_000, granted(pacer, 0, 1, 10_000));
    }

    @Test
    void grantsTheRateOverASecond() {
        Pacer pacer = new Pacer(100, 0);
        assertEquals(100, granted(pacer, 0, 1000, 100_000));
    }

    @Test
    void spacesTuplesByTheInterval() {
        Pacer pacer = new Pacer(10, 0);
        assertTrue(pacer.tryAcquire(0));
        assertFalse(pacer.tryAcquire(99 * MS));
        assertTrue(pacer.tryAcquire(100 * MS));
    }

    @Test
    void catchesUpAtMostOneSecondAfterAStall() {
        Pacer pacer = new Pacer(100, 0);
        assertTrue(pacer.tryAcquire(0));
        // held back for 10 s: at most one second's worth (100) at once, then the rate again
        long stalled = 10_000 * MS;
        int burst = 0;
        while (pacer.tryAcquire(stalled)) {
            burst++;
        }
        assertEquals(101, burst);
        assertFalse(pacer.tryAcquire(stalled + 5 * MS));
        assertTrue(pacer.tryAcquire(stalled + 10 * MS));
    }

    @Test
    void aNegativeRateIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> new Pacer(-1, 0));
    }
}
