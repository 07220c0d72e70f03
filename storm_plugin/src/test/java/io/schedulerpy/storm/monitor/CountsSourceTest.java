package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Counter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.metrics2.RollingAverageGauge;
import org.apache.storm.metrics2.StormMetricRegistry;
import org.apache.storm.policy.WaitStrategyPark;
import org.apache.storm.utils.JCQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Storm's real metrics registry and queues, filled the way storm-client's TaskMetrics and WorkerState fill them. */
class CountsSourceTest {
    static final String TOPO = "wc-1-2";
    static final int PORT = 6700;

    private final StormMetricRegistry registry = started();
    private JCQueue splitQueue;
    private JCQueue spoutQueue;

    /** A registry as a worker starts it ({@code Worker.start}: the worker's port and topology id). */
    static StormMetricRegistry started() {
        StormMetricRegistry r = new StormMetricRegistry();
        r.start(new HashMap<>(Map.of("storm.id", TOPO)), PORT);
        return r;
    }

    @AfterEach
    void close() {
        registry.stop();
        if (splitQueue != null) {
            splitQueue.close();
        }
        if (spoutQueue != null) {
            spoutQueue.close();
        }
    }

    private Counter counter(String name, String component, int task, String stream) {
        return registry.counter(name, TOPO, component, task, PORT, stream);
    }

    private JCQueue queue(String component, List<Integer> tasks) {
        return new JCQueue("receive-queue" + tasks, "receive-queue", 1024, 0, 1, new WaitStrategyPark(100), TOPO,
            component, tasks, PORT, registry);
    }

    @Test
    void aWindowHoldsEachTasksSampledCountsAndWeightedLatency() {
        splitQueue = queue("split", List.of(4, 5));
        spoutQueue = queue("spout", List.of(9));
        CountsSource source = new CountsSource(new StormCounters(registry));
        assertEquals(Map.of(4, "split", 5, "split", 9, "spout"), source.tasks());
        assertEquals(PORT, new StormCounters(registry).port());

        Counter emit = counter("__emit-count-default", "spout", 9, "default");
        Counter ackInit = counter("__emit-count-__ack_init", "spout", 9, "__ack_init");
        Counter exec = counter("__execute-count-spout:default", "split", 4, "default");
        Counter transfer = counter("__transfer-count-default", "split", 4, "default");
        RollingAverageGauge latency = new RollingAverageGauge();
        registry.gauge("__execute-latency-spout:default", latency, TOPO, "split", "default", 4, PORT);

        emit.inc(2400);
        ackInit.inc(2400);
        exec.inc(1000);
        latency.addValue(2);
        latency.addValue(2);
        latency.addValue(2);
        source.poll();                                   // 1000 executes at 2 ms
        exec.inc(3000);
        latency.addValue(1);
        latency.addValue(1);
        latency.addValue(1);
        transfer.inc(200);
        List<TaskCounts> w = source.window();            // + 3000 executes at 1 ms
        assertEquals(3, w.size());
        TaskCounts split = w.get(0);
        assertEquals(4, split.task());
        assertEquals(Map.of("spout:default", 4000L), split.executed());
        assertEquals(Map.of("default", 200L), split.transferred());
        assertEquals(1.25, split.executeMs().get("spout:default"), 1e-9, "(1000*2 + 3000*1) / 4000");
        assertEquals(Map.of(), w.get(1).executed(), "task 5 did nothing");
        TaskCounts spout = w.get(2);
        assertEquals(Map.of("default", 2400L, "__ack_init", 2400L), spout.emitted());
        assertEquals(0, source.takeResets());

        emit.inc(100);
        List<TaskCounts> next = source.window();
        assertEquals(Map.of("default", 100L), next.get(2).emitted(), "deltas, not totals");
        assertTrue(next.get(0).executeMs().isEmpty(), "no sampled execute in the window: no latency");
    }

    @Test
    void aCounterThatGoesBackwardsIsCountedAsAReset() {
        spoutQueue = queue("spout", List.of(9));
        CountsSource source = new CountsSource(new StormCounters(registry));
        Counter emit = counter("__emit-count-default", "spout", 9, "default");
        emit.inc(500);
        source.window();
        emit.dec(400);
        List<TaskCounts> w = source.window();
        assertEquals(Map.of(), w.get(0).emitted(), "dropped");
        assertEquals(1, source.takeResets());
        assertEquals(0, source.takeResets(), "per window");
    }

    @Test
    void liveCountersSeeEveryTupleAtTheQueuesExactly() throws Exception {
        splitQueue = queue("split", List.of(4, 5));
        spoutQueue = queue("spout", List.of(9));
        CountsSource source = new CountsSource(new StormCounters(registry));
        assertTrue(source.queuesExact(), "Storm 2.8's queue gauges hold their JCTools queues");
        WorkerView view = WorkerView.of(source.tasks(), TopologyRoutesTest.topology());

        splitQueue.publish("a");
        splitQueue.publish("b");
        splitQueue.publish("c");
        List<LiveCounters.Snapshot> before = source.live(view);
        LiveCounters.Snapshot four = before.get(0);
        assertEquals(3, four.pending(), "three tuples wait in split's queue");
        assertEquals(0, four.executed());
        assertEquals(0, before.get(1).pending(), "task 5 shares task 4's queue: counted once");
        assertTrue(before.get(2).spout());
        assertFalse(four.spout());

        int[] taken = {0};
        splitQueue.consume(new JCQueue.Consumer() {
            @Override
            public void accept(Object o) {
                taken[0]++;
            }

            @Override
            public void flush() {
            }
        });
        assertEquals(3, taken[0]);
        LiveCounters.Snapshot after = source.live(view).get(0);
        assertEquals(0, after.pending(), "drained");
        assertEquals(3, after.executed(), "every tuple that left the queue, exactly, none sampled");
        assertEquals(after, source.live(view).get(0), "nothing moves while nothing happens");
    }

    @Test
    void liveCountersUseStormsSampledCountersForEmitsAndAcks() {
        spoutQueue = queue("spout", List.of(9));
        CountsSource source = new CountsSource(new StormCounters(registry));
        counter("__emit-count-default", "spout", 9, "default").inc(40);
        counter("__emit-count-__ack_init", "spout", 9, "__ack_init").inc(40);
        counter("__ack-count-default", "spout", 9, "default").inc(20);
        LiveCounters.Snapshot s = source.live(null).get(0);
        assertEquals(40, s.emitted());
        assertEquals(40, s.ackInit());
        assertEquals(20, s.acked());
        assertEquals(0, s.pending(), "pending is what waits in the queues, not a sampled difference");
        assertNotNull(LiveRecord.path("/r", TOPO, "s:1"));
    }
}
