package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class WindowClockTest {
    @Test
    void boundariesAreMultiplesOfThePeriod() {
        assertEquals(1_795_250_710_000L, WindowClock.nextBoundary(1_795_250_700_001L, 10_000));
        assertEquals(1_795_250_710_000L, WindowClock.nextBoundary(1_795_250_709_999L, 10_000));
        // exactly on a boundary: the next one, never "now" (the loop must sleep)
        assertEquals(1_795_250_710_000L, WindowClock.nextBoundary(1_795_250_700_000L, 10_000));
        assertEquals(0L, WindowClock.nextBoundary(-1, 10_000));
        assertEquals(15_000L, WindowClock.nextBoundary(7_500, 7_500));
    }

    @Test
    void delayIsInZeroToPeriod() {
        for (long now = 1_000_000; now < 1_000_000 + 25_000; now += 137) {
            long d = WindowClock.delayToNextBoundary(now, 10_000);
            assertEquals(0, (now + d) % 10_000);
            assertEquals(true, d > 0 && d <= 10_000, "delay " + d);
        }
        assertThrows(IllegalArgumentException.class, () -> WindowClock.nextBoundary(1, 0));
    }

    @Test
    void rates() {
        assertEquals(120.0, WindowClock.perSecond(1200, 1_000, 11_000), 1e-9);
        assertEquals(0.0, WindowClock.perSecond(1200, 5, 5), 1e-9);
    }
}
