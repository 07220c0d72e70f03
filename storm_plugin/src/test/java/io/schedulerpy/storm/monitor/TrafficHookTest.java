package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.hooks.info.BoltAckInfo;
import org.apache.storm.hooks.info.EmitInfo;
import org.apache.storm.serialization.KryoValuesSerializer;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFramework;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.storm.shade.org.apache.curator.retry.RetryOneTime;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.testing.InProcessZookeeper;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;
import org.apache.storm.utils.ShellProcess;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hook, the per-worker monitor, the log and ZooKeeper together, with real Storm contexts. */
class TrafficHookTest {
    static final String TOPO = "wc-7-1795250648";
    static final int PORT = 6710;

    @TempDir
    Path logDir;

    @AfterEach
    void reset() {
        WorkerMonitor.resetAll();
    }

    static StormTopology topology() {
        TopologyBuilder b = new TopologyBuilder();
        b.setSpout("sentences", new TupleSizerTest.Spout(), 1);
        b.setBolt("split", new TupleSizerTest.Bolt(), 1).shuffleGrouping("sentences");
        return b.createTopology();
    }

    Map<String, Object> conf(long zkPort) {
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put("storm.log.dir", logDir.toString());
        conf.put("storm.local.hostname", "127.0.0.9");
        conf.put("scheduler.monitor.window.secs", 3600);      // the test closes the windows itself
        conf.put("scheduler.monitor.sample.rate", 1.0);
        if (zkPort > 0) {
            conf.put("storm.zookeeper.servers", List.of("127.0.0.1"));
            conf.put("storm.zookeeper.port", (int) zkPort);
        } else {
            conf.put("storm.zookeeper.servers", List.of());
        }
        return conf;
    }

    static TopologyContext context(StormTopology t, Map<String, Object> conf, int task) {
        Map<Integer, String> taskToComponent = new HashMap<>(Map.of(-1, "__system", 1, "__acker", 2, "sentences", 3, "split"));
        Map<String, List<Integer>> compTasks = Map.of("__system", List.of(-1), "__acker", List.of(1),
            "sentences", List.of(2), "split", List.of(3));
        Map<String, Map<String, Fields>> fields = new HashMap<>();
        fields.put("sentences", Map.of("default", new Fields("sentence")));
        fields.put("split", Map.of());
        fields.put("__system", Map.of("__tick", new Fields("rate_secs")));
        return new TopologyContext(t, conf, taskToComponent, compTasks, fields, new HashMap<>(), TOPO, null, null, task,
            PORT, List.of(-1, 1, 2, 3), new HashMap<>(), new HashMap<>(), new HashMap<>(), new HashMap<>(),
            new AtomicBoolean(), null);
    }

    @Test
    void countsEmitsAndWritesTheWindowToTheLogAndZooKeeper() throws Exception {
        System.clearProperty("workers.artifacts");
        System.clearProperty("storm.log.dir");
        try (InProcessZookeeper zk = new InProcessZookeeper();
             CuratorFramework reader = CuratorFrameworkFactory.newClient("127.0.0.1:" + zk.getPort(), new RetryOneTime(100))) {
            reader.start();
            Map<String, Object> conf = conf(zk.getPort());
            StormTopology t = topology();
            TrafficHook spoutHook = new TrafficHook();
            TrafficHook splitHook = new TrafficHook();
            spoutHook.prepare(conf, context(t, conf, 2));
            splitHook.prepare(conf, context(t, conf, 3));
            WorkerMonitor m = WorkerMonitor.find(TOPO, PORT);
            assertNotNull(m);

            List<Object> sentence = Arrays.asList("the cow jumped over the moon");
            for (int i = 0; i < 1000; i++) {
                spoutHook.emit(new EmitInfo(sentence, "default", 2, List.of(3)));
                spoutHook.emit(new EmitInfo(Arrays.asList(7L, 1L, 2), "__ack_init", 2, List.of(1)));
            }
            splitHook.emit(new EmitInfo(Arrays.asList("cow"), "default", 3, List.of()));   // no subscribers
            splitHook.emit(new EmitInfo(Arrays.asList(7L, 3L), "__ack_ack", 3, Arrays.asList((Integer) null)));

            // an executor thread of this worker, and a helper thread acking for task 3 (like a ShellBolt reader)
            CountDownLatch stop = new CountDownLatch(1);
            CountDownLatch burned = new CountDownLatch(2);
            Thread exec = CpuSamplerTest.burner("Thread-77-sentences-executor[2, 2]", stop, 200, burned);
            exec.start();
            Thread reader3 = new Thread(() -> {
                splitHook.boltAck(new BoltAckInfo(null, 3, 0L));
                ProcStatTest.burn(150);
                burned.countDown();
                try {
                    stop.await();
                } catch (InterruptedException e) {
                    // done
                }
            }, "Thread-78");
            reader3.start();
            assertTrue(burned.await(60, TimeUnit.SECONDS));

            WindowRecord r = m.closeWindow();
            stop.countDown();
            String json = r.toJson();
            Map<String, Object> rec = MiniJson.object(json);
            assertEquals(TOPO, rec.get("topology_id"));
            assertEquals("127.0.0.9", rec.get("host"));
            assertEquals("127.0.0.9", rec.get("supervisor_id"), "no Worker command line here: host in its place");
            assertEquals((long) PORT, rec.get("port"));
            assertEquals(0L, rec.get("seq"));

            int sentenceBytes = 1 + 1 + 1 + new KryoValuesSerializer(conf).serialize(sentence).length;
            assertEquals(List.of(
                new TrafficCounters.Entry(2, 1, "__ack_init", 1000, r.traffic.get(0).bytes()),
                new TrafficCounters.Entry(2, 3, "default", 1000, 1000L * sentenceBytes)), r.traffic);
            assertTrue(r.traffic.get(0).bytes() > 1000 * 5, "ack tuples have a size too");

            WindowRecord.ExecutorCpu spoutExec = r.executors.stream().filter(e -> e.executor().start() == 2).findFirst()
                .orElseThrow();
            assertEquals("sentences", spoutExec.executor().component());
            assertTrue(spoutExec.threadCpuMs() >= 100, "spout executor " + spoutExec.threadCpuMs());
            WindowRecord.ExecutorCpu splitExec = r.executors.stream().filter(e -> e.executor().start() == 3).findFirst()
                .orElseThrow();
            assertTrue(splitExec.threadCpuMs() >= 80, "split's helper thread " + splitExec.threadCpuMs());
            assertTrue(r.workerCpuMs >= spoutExec.threadCpuMs() + splitExec.threadCpuMs());

            Path log = logDir.resolve("workers-artifacts").resolve(TOPO).resolve(Integer.toString(PORT))
                .resolve("scheduler-py-monitor.jsonl");
            assertEquals(List.of(json), Files.readAllLines(log));

            String znode = "/scheduler-py/monitor/" + TOPO + "/127.0.0.9:" + PORT + "/w-" + r.windowEndMs;
            ZkPublisherTest.waitFor(() -> m.zk().published() >= 1, 20_000);
            assertEquals(json, ZkPublisherTest.gunzip(reader.getData().forPath(znode)));

            // the next window starts where this one ended and counts afresh
            spoutHook.emit(new EmitInfo(sentence, "default", 2, List.of(3)));
            WindowRecord r2 = m.closeWindow();
            assertEquals(1, r2.seq);
            assertEquals(r.windowEndMs, r2.windowStartMs);
            assertEquals(List.of(new TrafficCounters.Entry(2, 3, "default", 1, sentenceBytes)), r2.traffic);

            exec.join(5000);
            reader3.join(5000);
            spoutHook.cleanup();
            assertSame(m, WorkerMonitor.find(TOPO, PORT), "still used by split's hook");
            splitHook.cleanup();
            assertNull(WorkerMonitor.find(TOPO, PORT), "stopped with the last hook");
        }
    }

    @Test
    void shellLogHandlerAttributesTheSubprocessToItsTask() throws Exception {
        assumeTrue(ProcStat.available(), "needs Linux /proc");
        Map<String, Object> conf = conf(0);
        conf.put("scheduler.monitor.log.enabled", false);
        StormTopology t = topology();
        TrafficHook hook = new TrafficHook();
        hook.prepare(conf, context(t, conf, 3));
        WorkerMonitor m = WorkerMonitor.find(TOPO, PORT);
        Process child = new ProcessBuilder("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 60").start();
        try {
            ShellProcess sp = new ShellProcess(new String[]{"sh"});
            sp.pid = child.pid();
            MonitorShellLogHandler handler = new MonitorShellLogHandler();
            handler.setUpContext(getClass(), sp, context(t, conf, 3));
            CpuSamplerTest.waitForCpu(child.pid(), 100);
            WindowRecord r = m.closeWindow();
            WindowRecord.ExecutorCpu split = r.executors.stream().filter(e -> e.executor().start() == 3).findFirst()
                .orElseThrow();
            assertEquals("split", split.executor().component());
            assertEquals(List.of(child.pid()), split.subprocessPids());
            assertTrue(split.subprocessCpuMs() >= 100, "subprocess " + split.subprocessCpuMs());
            assertEquals(null, m.log());
            assertEquals(null, m.zk());
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
            hook.cleanup();
        }
    }

    @Test
    void aBrokenSetupNeverThrowsIntoStorm() {
        TrafficHook hook = new TrafficHook();
        hook.prepare(null, null);                             // nothing to work with
        hook.emit(new EmitInfo(List.of("x"), "default", 1, List.of(2)));
        hook.boltAck(null);
        hook.cleanup();
    }
}
