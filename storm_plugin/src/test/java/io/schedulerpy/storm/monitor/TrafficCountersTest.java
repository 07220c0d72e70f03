package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class TrafficCountersTest {
    @Test
    void countsPerSourceDestinationAndStream() {
        TrafficCounters c = new TrafficCounters();
        TrafficCounters.StreamTraffic s = c.forTask(9).stream("default");
        for (int i = 0; i < 3; i++) {
            s.count(List.of(4));
        }
        s.count(List.of(4, 5));                           // an "all" grouping: one tuple to each
        c.forTask(9).stream("__ack_init").count(List.of(1));
        c.forTask(2).stream("default").count(List.of(4));
        c.forTask(9).stream(null).count(List.of(6));      // null stream = default

        List<TrafficCounters.Entry> e = c.drain();
        assertEquals(List.of(
            new TrafficCounters.Entry(2, 4, "default", 1, 0),
            new TrafficCounters.Entry(9, 1, "__ack_init", 1, 0),
            new TrafficCounters.Entry(9, 4, "default", 4, 0),
            new TrafficCounters.Entry(9, 5, "default", 1, 0),
            new TrafficCounters.Entry(9, 6, "default", 1, 0)), e);
    }

    @Test
    void drainResetsAndSkipsIdlePairs() {
        TrafficCounters c = new TrafficCounters();
        c.forTask(1).stream("s").count(List.of(2));
        assertEquals(1, c.drain().size());
        assertTrue(c.drain().isEmpty());
        c.forTask(1).stream("s").count(List.of(2));
        assertEquals(1, c.drain().get(0).tuples());
    }

    @Test
    void nullAndEmptyDestinationsAreNotCounted() {
        TrafficCounters c = new TrafficCounters();
        TrafficCounters.StreamTraffic s = c.forTask(1).stream("d");
        assertEquals(0, s.count(Collections.singletonList(null)));   // emitDirect to a non-subscriber
        assertEquals(0, s.count(List.of()));
        assertEquals(0, s.count(null));
        assertEquals(1, s.count(Arrays.asList(null, 3)));
        assertEquals(List.of(new TrafficCounters.Entry(1, 3, "d", 1, 0)), c.drain());
    }

    @Test
    void bytesAreAverageSampledSizeTimesTuples() {
        TrafficCounters c = new TrafficCounters();
        TrafficCounters.StreamTraffic s = c.forTask(9).stream("default");
        assertTrue(s.shouldSample(0.0), "the first emit of a stream is always sampled");
        s.addSample(80);
        assertFalse(s.shouldSample(0.0));
        s.addSample(100);
        for (int i = 0; i < 1200; i++) {
            s.count(List.of(4));
        }
        assertEquals(List.of(new TrafficCounters.Entry(9, 4, "default", 1200, 1200 * 90)), c.drain());
        // no sample in the next window: the last known average is used
        for (int i = 0; i < 10; i++) {
            s.count(List.of(4));
        }
        assertEquals(900, c.drain().get(0).bytes());
        s.addSample(50);
        s.count(List.of(4));
        assertEquals(50, c.drain().get(0).bytes());
    }

    @Test
    void samplingRateIsRoughlyHonoured() {
        TrafficCounters.StreamTraffic s = new TrafficCounters().forTask(1).stream("x");
        s.addSample(1);
        int n = 0;
        for (int i = 0; i < 100_000; i++) {
            if (s.shouldSample(0.01)) {
                n++;
            }
        }
        assertTrue(n > 800 && n < 1200, "sampled " + n);
        assertTrue(s.shouldSample(1.0));
    }

    @Test
    void sizesAreSampledEveryOneOverRateEmits() {
        TrafficCounters.StreamTraffic s = new TrafficCounters().forTask(1).stream("x");
        assertTrue(s.shouldSample(0.25), "the first emit is sampled");
        s.addSample(1);
        StringBuilder pattern = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            pattern.append(s.shouldSample(0.25) ? 'S' : '.');
        }
        assertEquals("S...S...", pattern.toString());
    }

    @Test
    void taskIdsBeyondTheDenseRangeAndNegativeOnesAreCounted() {
        TrafficCounters c = new TrafficCounters();
        TrafficCounters.StreamTraffic s = c.forTask(1).stream("d");
        int big = TrafficCounters.StreamTraffic.MAX_DENSE_TASK + 5;
        s.count(Arrays.asList(-1, 3, 1000, big, 3));
        assertEquals(List.of(
            new TrafficCounters.Entry(1, -1, "d", 1, 0),
            new TrafficCounters.Entry(1, 3, "d", 2, 0),
            new TrafficCounters.Entry(1, 1000, "d", 1, 0),
            new TrafficCounters.Entry(1, big, "d", 1, 0)), c.drain());
    }

    @Test
    void concurrentEmittersAndDrainsLoseNothing() throws Exception {
        TrafficCounters c = new TrafficCounters();
        int threads = 4;
        int perThread = 200_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int src = t % 2;                               // two threads per source task
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                TrafficCounters.StreamTraffic s = c.forTask(src).stream("default");
                for (int i = 0; i < perThread; i++) {
                    s.count(List.of(10 + (i & 3)));
                }
            });
            th.start();
            ts.add(th);
        }
        AtomicBoolean done = new AtomicBoolean();
        long[] total = new long[1];
        Thread drainer = new Thread(() -> {
            while (!done.get()) {
                for (TrafficCounters.Entry e : c.drain()) {
                    total[0] += e.tuples();
                }
            }
        });
        drainer.start();
        go.countDown();
        for (Thread th : ts) {
            th.join();
        }
        done.set(true);
        drainer.join();
        for (TrafficCounters.Entry e : c.drain()) {
            total[0] += e.tuples();
        }
        assertEquals((long) threads * perThread, total[0]);
    }
}
