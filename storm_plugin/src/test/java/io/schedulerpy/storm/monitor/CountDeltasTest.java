package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CountDeltasTest {
    @Test
    void growthSinceTheBaselineIsReported() {
        CountDeltas d = new CountDeltas();
        d.baseline(Map.of("4|__emit-count-default", 100L));
        assertEquals(Map.of("4|__emit-count-default", 40L), d.deltas(Map.of("4|__emit-count-default", 140L)));
        assertEquals(Map.of(), d.deltas(Map.of("4|__emit-count-default", 140L)), "no growth, no entry");
        assertEquals(0, d.resets());
    }

    @Test
    void aCounterFirstSeenAfterTheBaselineCountsFromZero() {
        CountDeltas d = new CountDeltas();
        d.baseline(Map.of());
        assertEquals(Map.of("9|__ack-count-default", 20L), d.deltas(Map.of("9|__ack-count-default", 20L)));
    }

    @Test
    void withoutABaselineTheFirstCallOnlyRemembers() {
        CountDeltas d = new CountDeltas();
        assertEquals(Map.of(), d.deltas(Map.of("a", 500L)));
        assertEquals(Map.of("a", 5L), d.deltas(Map.of("a", 505L)));
    }

    @Test
    void aCounterThatGoesBackwardsIsDroppedCountedAndRebased() {
        CountDeltas d = new CountDeltas();
        d.baseline(Map.of("a", 1000L, "b", 10L));
        Map<String, Long> w = d.deltas(Map.of("a", 60L, "b", 30L));
        assertEquals(Map.of("b", 20L), w, "the reset counter's window is dropped, the others counted");
        assertEquals(1, d.resets());
        assertEquals(Map.of("a", 40L), d.deltas(Map.of("a", 100L, "b", 30L)), "counted again from its new value");
        assertEquals(1, d.resets());
    }

    @Test
    void aCounterThatDisappearsIsForgottenAndCountsFromZeroWhenBack() {
        CountDeltas d = new CountDeltas();
        d.baseline(Map.of("a", 50L));
        assertEquals(Map.of(), d.deltas(Map.of()));
        assertEquals(Map.of("a", 7L), d.deltas(Map.of("a", 7L)));
        assertEquals(0, d.resets());
    }
}
