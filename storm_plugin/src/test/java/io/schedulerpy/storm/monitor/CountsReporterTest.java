package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Gauge;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.storm.metrics2.StormMetricRegistry;
import org.apache.storm.policy.WaitStrategyPark;
import org.apache.storm.utils.JCQueue;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CountsReporterTest {
    static final String TOPO = "wc-7-1795250648";
    static final int PORT = 6703;

    @TempDir
    Path logDir;

    @AfterEach
    void reset() {
        WorkerMonitor.resetAll();
    }

    private Map<String, Object> conf() {
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put("storm.id", TOPO);
        conf.put("storm.log.dir", logDir.toString());
        conf.put("storm.local.dir", logDir.resolve("local").toString());
        conf.put("storm.local.hostname", "127.0.0.9");
        conf.put("scheduler.monitor.window.secs", 3600);
        conf.put("scheduler.monitor.zk.enabled", false);
        conf.put("topology.stats.sample.rate", 0.05);
        return conf;
    }

    @Test
    void exactModeAddsTheHookToTheWorkersConfOnce() {
        Map<String, Object> conf = new HashMap<>();
        conf.put("topology.auto.task.hooks", List.of("x.Other"));
        assertTrue(CountsReporter.addHook(conf));
        assertTrue(CountsReporter.addHook(conf));
        assertEquals(List.of("x.Other", CountsReporter.HOOK), conf.get("topology.auto.task.hooks"));
        assertFalse(CountsReporter.addHook(Map.of()), "an unmodifiable conf: a warning, no exception");
    }

    @Test
    void theModeKeyIsReadAndCheckedByTheConfig() {
        assertFalse(new MonitorConfig(Map.of()).exact, "counts by default");
        assertTrue(new MonitorConfig(Map.of("scheduler.monitor.mode", "EXACT")).exact);
        MonitorConfig bad = new MonitorConfig(Map.of("scheduler.monitor.mode", "pairs"));
        assertFalse(bad.exact);
        assertEquals(1, bad.problems().size());
    }

    @Test
    void theReporterStartsTheWorkersMonitorOnceStormsTaskMetricsAreThere() throws Exception {
        StormMetricRegistry registry = new StormMetricRegistry();
        Map<String, Object> conf = conf();
        registry.start(conf, PORT);
        conf.put("scheduler.monitor.mode", "exact");
        CountsReporter reporter = new CountsReporter();
        reporter.prepare(registry, conf, Map.of());
        assertEquals(List.of(CountsReporter.HOOK), conf.get("topology.auto.task.hooks"));
        reporter.start();
        JCQueue queue = new JCQueue("receive-queue[4, 4]", "receive-queue", 1024, 0, 1, new WaitStrategyPark(100),
            TOPO, "split", List.of(4), PORT, registry);
        // a window lists the counts of the executors running in it (format §1.1): one named as Storm names it
        CountDownLatch done = new CountDownLatch(1);
        Thread executor = new Thread(() -> {
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "Thread-7-split-executor[4, 4]");
        executor.start();
        try {
            long deadline = System.currentTimeMillis() + 10_000;
            while (WorkerMonitor.find(TOPO, PORT) == null && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
            WorkerMonitor m = WorkerMonitor.find(TOPO, PORT);
            assertNotNull(m, "monitor started within 10 s");
            assertNotNull(m.counts());
            assertFalse(m.hooked(), "no hook ran in this worker");
            registry.counter("__execute-count-spout:default", TOPO, "split", 4, PORT, "default").inc(20);
            Map<String, Object> r = MiniJson.object(m.closeWindow().toJson());
            assertEquals(2L, r.get("v"));
            assertEquals("counts", r.get("mode"));
            assertEquals(0.05, r.get("sample_rate"));
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> tc = (List<Map<String, Object>>) r.get("task_counts");
            assertEquals(1, tc.size());
            assertEquals(Map.of("spout:default", 20L), tc.get(0).get("executed"));
            assertEquals(List.of(), r.get("routes"), "no supervisor copy of the topology here: no routes");
            LiveRecord live = m.liveRecord(0);
            assertEquals(1, live.tasks().size());
            assertEquals(4, live.tasks().get(0).task());
            // the Netty counts (format §1.1): the first window is the baseline, and no gauge was registered yet
            // (the Netty gauges are the system task's: Storm's registry then names task -1 too)
            assertFalse(r.containsKey("netty_sent_messages"));
            AtomicInteger sent = new AtomicInteger(400);
            registry.gauge("__send-iconnection-sent-127.0.0.8:6704", (Gauge<Integer>) sent::get, "__system", -1);
            Map<String, Object> second = MiniJson.object(m.closeWindow().toJson());
            assertEquals(400L, second.get("netty_sent_messages"), "a client that appeared after the baseline: all");
            sent.addAndGet(37);
            Map<String, Object> third = MiniJson.object(m.closeWindow().toJson());
            assertEquals(37L, third.get("netty_sent_messages"));
            if (Files.isReadable(Paths.get("/proc/self/task"))) {
                assertEquals(0L, third.get("netty_written_bytes"), "Linux: no Netty client thread in this JVM");
            }
        } finally {
            done.countDown();
            reporter.stop();
            queue.close();
            registry.stop();
        }
        assertNull(WorkerMonitor.find(TOPO, PORT), "stopped with its only user");
    }
}
