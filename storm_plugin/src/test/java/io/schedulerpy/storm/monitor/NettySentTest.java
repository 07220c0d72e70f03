package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Gauge;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.storm.Constants;
import org.apache.storm.metrics2.StormMetricRegistry;
import org.junit.jupiter.api.Test;

class NettySentTest {
    private final Object clientA = new Object();
    private final Object clientB = new Object();

    private static NettySent.Reading r(Object gauge, long value) {
        return new NettySent.Reading(gauge, value, true);
    }

    @Test
    void theFirstWindowIsTheBaseline() {
        NettySent s = new NettySent();
        assertEquals(-1, s.window(Map.of("h1:6701", r(clientA, 500))), "first call: baseline, field left out");
        assertEquals(120, s.window(Map.of("h1:6701", r(clientA, 620))), "then the increase");
        assertEquals(0, s.window(Map.of("h1:6701", r(clientA, 620))));
    }

    @Test
    void noGaugeRegisteredIsUnknown() {
        NettySent s = new NettySent();
        assertEquals(-1, s.window(Map.of()));
        assertEquals(-1, s.window(Map.of()), "no remote worker (yet): left out, not 0");
        assertEquals(40, s.window(Map.of("h1:6701", r(clientA, 40))), "a client created after the baseline: all");
    }

    @Test
    void aNewKeyCountsItsWholeValue() {
        NettySent s = new NettySent();
        s.window(Map.of("h1:6701", r(clientA, 100)));
        assertEquals(10 + 30, s.window(Map.of("h1:6701", r(clientA, 110), "h2:6702", r(clientB, 30))));
        assertEquals(5 + 7, s.window(Map.of("h1:6701", r(clientA, 115), "h2:6702", r(clientB, 37))));
    }

    @Test
    void aNewClientUnderTheSameNameCountsItsWholeValue() {
        NettySent s = new NettySent();
        s.window(Map.of("h1:6701", r(clientA, 1000)));
        assertEquals(25, s.window(Map.of("h1:6701", r(clientB, 25))), "went down: a new Client, its new value");
        assertEquals(1500, s.window(Map.of("h1:6701", r(new Object(), 1500))),
            "a new gauge that already exceeds the old value still counts whole");
    }

    @Test
    void aResetGaugeCountsItsNewValue() {
        NettySent s = new NettySent();
        NettySent.Reading before = new NettySent.Reading(clientA, 900, false);
        s.window(Map.of("h1:6701", before));
        assertEquals(30, s.window(Map.of("h1:6701", new NettySent.Reading(clientA, 30, false))));
    }

    @Test
    void storms32BitCounterWrapsModulo2To32() {
        NettySent s = new NettySent();
        long nearTop = (1L << 32) - 10;
        s.window(Map.of("h1:6701", r(clientA, nearTop)));
        assertEquals(10 + 5, s.window(Map.of("h1:6701", r(clientA, 5))));
    }

    @Test
    void aVanishedKeyCountsNothing() {
        NettySent s = new NettySent();
        s.window(Map.of("h1:6701", r(clientA, 100), "h2:6702", r(clientB, 50)));
        assertEquals(20, s.window(Map.of("h1:6701", r(clientA, 120))));
        assertEquals(60, s.window(Map.of("h1:6701", r(clientA, 130), "h2:6702", r(clientB, 50))),
            "forgotten: back again, it is new");
    }

    @Test
    void readingsOfStormsGauges() {
        AtomicInteger sent = new AtomicInteger(Integer.MAX_VALUE);
        Gauge<Integer> g = sent::get;
        assertEquals(Integer.MAX_VALUE, NettySent.Reading.of(g).value());
        sent.incrementAndGet();                              // wraps to Integer.MIN_VALUE
        NettySent.Reading wrapped = NettySent.Reading.of(g);
        assertEquals(1L << 31, wrapped.value(), "read unsigned");
        assertTrue(wrapped.int32());
        assertEquals(7L, NettySent.Reading.of((Gauge<Long>) () -> 7L).value());
        assertNull(NettySent.Reading.of((Gauge<Long>) () -> -1L));
        assertNull(NettySent.Reading.of((Gauge<String>) () -> "x"));
        assertNull(NettySent.Reading.of((Gauge<Double>) () -> Double.NaN));
        assertNull(NettySent.Reading.of(() -> {
            throw new IllegalStateException("closed");
        }));
    }

    @Test
    void stormsRegistryHoldsTheClientsGaugesUnderTheSystemTask() {
        StormMetricRegistry registry = CountsSourceTest.started();
        try {
            AtomicInteger a = new AtomicInteger(3);
            AtomicInteger b = new AtomicInteger(4);
            // as storm-client messaging/netty/Client.java registers them
            registry.gauge("__send-iconnection-sent-10.0.0.2:6701", (Gauge<Integer>) a::get,
                Constants.SYSTEM_COMPONENT_ID, (int) Constants.SYSTEM_TASK_ID);
            registry.gauge("__send-iconnection-pending-10.0.0.2:6701", (Gauge<Long>) () -> 99L,
                Constants.SYSTEM_COMPONENT_ID, (int) Constants.SYSTEM_TASK_ID);
            registry.gauge("__send-iconnection-sent-10.0.0.3:6702", (Gauge<Integer>) b::get,
                Constants.SYSTEM_COMPONENT_ID, (int) Constants.SYSTEM_TASK_ID);
            CountsSource source = new CountsSource(new StormCounters(registry));
            Map<String, NettySent.Reading> now = source.nettySent();
            assertEquals(List.of("10.0.0.2:6701", "10.0.0.3:6702"), List.copyOf(now.keySet()));
            assertEquals(3, now.get("10.0.0.2:6701").value());
            assertNotSame(now.get("10.0.0.2:6701").gauge(), now.get("10.0.0.3:6702").gauge());

            NettySent s = new NettySent();
            assertEquals(-1, s.window(source.nettySent()));
            a.addAndGet(100);
            b.addAndGet(11);
            assertEquals(111, s.window(source.nettySent()));
            Map<String, NettySent.Reading> same = new HashMap<>(source.nettySent());
            assertEquals(0, s.window(same));
        } finally {
            registry.stop();
        }
    }
}
