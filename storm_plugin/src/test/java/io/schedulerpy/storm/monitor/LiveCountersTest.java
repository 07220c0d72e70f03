package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LiveCountersTest {
    @Test
    void userStreamsOnly() {
        assertTrue(LiveCounters.isUserStream("default"));
        assertTrue(LiveCounters.isUserStream(null));
        assertTrue(LiveCounters.isUserStream("_one_underscore"));
        assertTrue(LiveCounters.isUserStream("a__b"));
        assertFalse(LiveCounters.isUserStream("__ack_init"));
        assertFalse(LiveCounters.isUserStream("__tick"));
        assertFalse(LiveCounters.isUserStream("__metrics_tick"));
    }

    @Test
    void boltCountsUserStreamsOnceAndSkipsSystemTuples() {
        LiveCounters c = new LiveCounters();
        LiveCounters.TaskLive split = c.register(4, "split", false);
        split.onEmit("default");
        split.onEmit("words");
        split.onEmit("__ack_ack");                // acker traffic is not user traffic
        split.onEmit("__metrics");
        split.onExecute("default");
        split.onExecute("default");
        split.onExecute("__tick");                // tick tuples are executed but not counted
        split.onExecute(null);
        split.onBoltAck("default");
        split.onBoltAck("__tick");
        split.onBoltFail("default");
        split.onBoltFail("__tick");

        LiveCounters.Snapshot s = c.snapshot().get(0);
        assertEquals(new LiveCounters.Snapshot(4, "split", false, 2, 3, 1, 1, 0), s);
        assertEquals(0, s.pending(), "bolts have no pending trees");
    }

    @Test
    void spoutPendingIsAckInitMinusAckedAndFailedFlooredAtZero() {
        LiveCounters c = new LiveCounters();
        LiveCounters.TaskLive spout = c.register(9, "sentences", true);
        for (int i = 0; i < 10; i++) {
            spout.onEmit("default");
            spout.onEmit("__ack_init");
        }
        spout.onEmit("default");                  // unanchored: no tree, no ack
        for (int i = 0; i < 6; i++) {
            spout.onSpoutAck();
        }
        spout.onSpoutFail();
        LiveCounters.Snapshot s = c.snapshot().get(0);
        assertEquals(new LiveCounters.Snapshot(9, "sentences", true, 11, 0, 6, 1, 10), s);
        assertEquals(3, s.pending());

        // without ackers Storm acks a spout's tuples at once, with no __ack_init: never negative
        LiveCounters.TaskLive noAckers = c.register(10, "sentences", true);
        noAckers.onEmit("default");
        noAckers.onSpoutAck();
        assertEquals(0, c.snapshot().get(1).pending());
    }

    @Test
    void aTaskIsASpoutOnceItActsLikeOne() {
        LiveCounters c = new LiveCounters();
        c.register(1, "s", false).onEmit("__ack_init");
        c.register(2, "s", false).onSpoutAck();
        c.register(3, "s", false).onSpoutFail();
        c.register(4, "b", false).onEmit("default");
        List<Boolean> spouts = new ArrayList<>();
        for (LiveCounters.Snapshot s : c.snapshot()) {
            spouts.add(s.spout());
        }
        assertEquals(List.of(true, true, true, false), spouts);
        assertEquals(1, c.snapshot().get(0).pending());
    }

    @Test
    void registerIsIdempotentAndSnapshotsAreSortedByTask() {
        LiveCounters c = new LiveCounters();
        LiveCounters.TaskLive a = c.register(7, "count", false);
        c.register(-1, "__system", false);
        c.register(2, "__acker", false);
        assertSame(a, c.register(7, "count", false));
        assertSame(a, c.get(7));
        assertNull(c.get(8));
        assertTrue(c.register(7, "count", true).spout, "a later spout registration sticks");
        List<Integer> tasks = new ArrayList<>();
        for (LiveCounters.Snapshot s : c.snapshot()) {
            tasks.add(s.task());
        }
        assertEquals(List.of(-1, 2, 7), tasks);
        assertEquals("", c.register(11, null, false).component);
    }

    @Test
    void countsFromManyThreadsAreNotLost() throws Exception {
        LiveCounters c = new LiveCounters();
        LiveCounters.TaskLive t = c.register(1, "b", false);
        Thread[] threads = new Thread[4];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = new Thread(() -> {
                for (int j = 0; j < 10_000; j++) {
                    t.onEmit("default");
                    t.onBoltAck("default");
                }
            });
            threads[i].start();
        }
        for (Thread th : threads) {
            th.join();
        }
        LiveCounters.Snapshot s = c.snapshot().get(0);
        assertEquals(40_000, s.emitted());
        assertEquals(40_000, s.acked());
    }

    @Test
    void recordJsonShape() {
        LiveCounters c = new LiveCounters();
        LiveCounters.TaskLive spout = c.register(9, "sentences", true);
        spout.onEmit("default");
        spout.onEmit("__ack_init");
        spout.onEmit("__ack_init");
        spout.onSpoutAck();
        c.register(1, "__acker", false);
        c.register(4, "sp\"lit", false).onExecute("default");
        LiveRecord r = new LiveRecord("wc-1-2", "sup-a", "127.0.0.2", 6700, 1_795_250_712_345L, 1_795_250_700_000L,
            17, c.snapshot());
        String json = r.toJson();
        assertEquals("{\"v\": 1, \"topology_id\": \"wc-1-2\", \"supervisor_id\": \"sup-a\", \"host\": \"127.0.0.2\", "
            + "\"port\": 6700, \"ts_ms\": 1795250712345, \"started_ms\": 1795250700000, \"seq\": 17, \"tasks\": ["
            + "{\"task\": 1, \"component\": \"__acker\", \"spout\": false, \"emitted\": 0, \"executed\": 0, "
            + "\"acked\": 0, \"failed\": 0, \"ack_init\": 0, \"pending\": 0}, "
            + "{\"task\": 4, \"component\": \"sp\\\"lit\", \"spout\": false, \"emitted\": 0, \"executed\": 1, "
            + "\"acked\": 0, \"failed\": 0, \"ack_init\": 0, \"pending\": 0}, "
            + "{\"task\": 9, \"component\": \"sentences\", \"spout\": true, \"emitted\": 1, \"executed\": 0, "
            + "\"acked\": 1, \"failed\": 0, \"ack_init\": 2, \"pending\": 1}]}", json);

        Map<String, Object> doc = MiniJson.object(json);
        assertEquals(List.of("v", "topology_id", "supervisor_id", "host", "port", "ts_ms", "started_ms", "seq", "tasks"),
            new ArrayList<>(doc.keySet()));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> tasks = (List<Map<String, Object>>) doc.get("tasks");
        assertEquals(3, tasks.size());
        assertEquals(List.of("task", "component", "spout", "emitted", "executed", "acked", "failed", "ack_init",
            "pending"), new ArrayList<>(tasks.get(2).keySet()));
        assertEquals("sp\"lit", tasks.get(1).get("component"));
        assertEquals(Boolean.TRUE, tasks.get(2).get("spout"));
        assertEquals(1L, tasks.get(2).get("pending"));

        assertEquals("{\"v\": 1, \"topology_id\": \"t\", \"supervisor_id\": \"s\", \"host\": \"h\", \"port\": 1, "
            + "\"ts_ms\": 2, \"started_ms\": 1, \"seq\": 0, \"tasks\": []}",
            new LiveRecord("t", "s", "h", 1, 2, 1, 0, List.of()).toJson());
        assertEquals("{\"v\": 1, \"topology_id\": \"t\", \"supervisor_id\": \"s\", \"host\": \"h\", \"port\": 1, "
            + "\"ts_ms\": 2, \"started_ms\": 1, \"seq\": 0, \"supervisor_thrift_port\": 6628, \"tasks\": []}",
            new LiveRecord("t", "s", "h", 1, 2, 1, 0, List.of(), 6628).toJson());
        assertEquals("/scheduler-py/live/wc-1-2/sup-a:6700", LiveRecord.path("/scheduler-py", "wc-1-2", "sup-a:6700"));
    }
}
