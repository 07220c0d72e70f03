package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.hooks.info.BoltAckInfo;
import org.apache.storm.hooks.info.BoltExecuteInfo;
import org.apache.storm.hooks.info.BoltFailInfo;
import org.apache.storm.hooks.info.EmitInfo;
import org.apache.storm.hooks.info.SpoutAckInfo;
import org.apache.storm.hooks.info.SpoutFailInfo;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFramework;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.storm.shade.org.apache.curator.retry.RetryOneTime;
import org.apache.storm.shade.org.apache.zookeeper.CreateMode;
import org.apache.storm.shade.org.apache.zookeeper.KeeperException;
import org.apache.storm.shade.org.apache.zookeeper.Watcher;
import org.apache.storm.shade.org.apache.zookeeper.ZooKeeper;
import org.apache.storm.shade.org.apache.zookeeper.data.Stat;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.testing.InProcessZookeeper;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.TupleImpl;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** The live counters through the real hook methods, and their ephemeral znode in a real (in-process) ZooKeeper. */
class LivePublisherTest {
    static final String TOPO = TrafficHookTest.TOPO;
    static final int PORT = TrafficHookTest.PORT;

    @TempDir
    Path logDir;

    @AfterEach
    void reset() {
        WorkerMonitor.resetAll();
    }

    Map<String, Object> conf(long zkPort, double liveSecs) {
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put("storm.log.dir", logDir.toString());
        conf.put("storm.local.hostname", "127.0.0.9");
        conf.put("scheduler.monitor.window.secs", 3600);
        conf.put("scheduler.monitor.log.enabled", false);
        conf.put("scheduler.monitor.live.secs", liveSecs);
        conf.put("storm.zookeeper.servers", zkPort > 0 ? List.of("127.0.0.1") : List.of());
        if (zkPort > 0) {
            conf.put("storm.zookeeper.port", (int) zkPort);
        }
        return conf;
    }

    static Map<Integer, Map<String, Object>> byTask(String json) {
        Map<Integer, Map<String, Object>> out = new HashMap<>();
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> tasks = (List<Map<String, Object>>) MiniJson.object(json).get("tasks");
        for (Map<String, Object> t : tasks) {
            out.put(((Long) t.get("task")).intValue(), t);
        }
        return out;
    }

    @Test
    void theHookCountsUserTuplesPerTask() {
        Map<String, Object> conf = conf(0, 1.0);
        StormTopology t = TrafficHookTest.topology();
        TopologyContext spoutCtx = TrafficHookTest.context(t, conf, 2);
        TopologyContext splitCtx = TrafficHookTest.context(t, conf, 3);
        TrafficHook acker = new TrafficHook();
        TrafficHook system = new TrafficHook();
        TrafficHook spout = new TrafficHook();
        TrafficHook split = new TrafficHook();
        acker.prepare(conf, TrafficHookTest.context(t, conf, 1));
        system.prepare(conf, TrafficHookTest.context(t, conf, -1));
        spout.prepare(conf, spoutCtx);
        split.prepare(conf, splitCtx);
        WorkerMonitor m = WorkerMonitor.find(TOPO, PORT);
        assertNull(m.livePublisher(), "no ZooKeeper: no live znode");

        List<Object> sentence = Arrays.asList("the cow");
        for (int i = 0; i < 5; i++) {
            spout.emit(new EmitInfo(sentence, "default", 2, List.of(3)));            // anchored
            spout.emit(new EmitInfo(Arrays.asList(7L + i, 1L, 2), "__ack_init", 2, List.of(1)));
        }
        spout.emit(new EmitInfo(sentence, "default", 2, List.of()));                 // no subscriber: still an emit
        spout.spoutAck(new SpoutAckInfo("m1", 2, 3L));
        spout.spoutAck(new SpoutAckInfo("m2", 2, 3L));
        spout.spoutFail(new SpoutFailInfo("m3", 2, 3L));

        Tuple fromSpout = new TupleImpl(splitCtx, sentence, "sentences", 2, "default");
        Tuple tick = new TupleImpl(splitCtx, Arrays.asList(1), "__system", -1, "__tick");
        for (int i = 0; i < 4; i++) {
            split.boltExecute(new BoltExecuteInfo(fromSpout, 3, 1L));
            split.emit(new EmitInfo(Arrays.asList("cow"), "default", 3, List.of(4, 5)));   // 2 destinations, 1 emit
            split.emit(new EmitInfo(Arrays.asList(7L, 3L), "__ack_ack", 3, List.of(1)));
        }
        split.boltExecute(new BoltExecuteInfo(tick, 3, 1L));
        split.boltAck(new BoltAckInfo(fromSpout, 3, 1L));
        split.boltAck(new BoltAckInfo(tick, 3, 1L));
        split.boltFail(new BoltFailInfo(fromSpout, 3, 1L));
        acker.boltExecute(new BoltExecuteInfo(new TupleImpl(splitCtx, Arrays.asList(7L, 1L, 2), "sentences", 2,
            "__ack_init"), 1, 0L));

        String json = m.liveRecord(5).toJson();
        Map<String, Object> doc = MiniJson.object(json);
        assertEquals(1L, doc.get("v"));
        assertEquals(TOPO, doc.get("topology_id"));
        assertEquals("127.0.0.9", doc.get("supervisor_id"));
        assertEquals("127.0.0.9", doc.get("host"));
        assertEquals((long) PORT, doc.get("port"));
        assertEquals(5L, doc.get("seq"));
        assertEquals(m.startedMs(), doc.get("started_ms"));
        assertTrue((Long) doc.get("ts_ms") >= m.startedMs());

        Map<Integer, Map<String, Object>> tasks = byTask(json);
        assertEquals(java.util.Set.of(-1, 1, 2, 3), tasks.keySet(), "every task with a hook, system ones included");
        assertEquals(Map.of("task", -1L, "component", "__system", "spout", false, "emitted", 0L, "executed", 0L,
            "acked", 0L, "failed", 0L, "ack_init", 0L, "pending", 0L), tasks.get(-1));
        assertEquals(Map.of("task", 1L, "component", "__acker", "spout", false, "emitted", 0L, "executed", 0L,
            "acked", 0L, "failed", 0L, "ack_init", 0L, "pending", 0L), tasks.get(1));
        assertEquals(Map.of("task", 2L, "component", "sentences", "spout", true, "emitted", 6L, "executed", 0L,
            "acked", 2L, "failed", 1L, "ack_init", 5L, "pending", 2L), tasks.get(2));
        assertEquals(Map.of("task", 3L, "component", "split", "spout", false, "emitted", 4L, "executed", 4L,
            "acked", 1L, "failed", 1L, "ack_init", 0L, "pending", 0L), tasks.get(3));

        for (TrafficHook h : List.of(acker, system, spout, split)) {
            h.cleanup();
        }
        assertNull(WorkerMonitor.find(TOPO, PORT));
        split.boltExecute(new BoltExecuteInfo(fromSpout, 3, 1L));       // after cleanup: ignored
        split.spoutAck(null);
    }

    @Test
    void publishesAnEphemeralZnodeThatSurvivesDeletionAndSessionLoss() throws Exception {
        try (InProcessZookeeper zk = new InProcessZookeeper();
             CuratorFramework reader = CuratorFrameworkFactory.newClient("127.0.0.1:" + zk.getPort(), new RetryOneTime(100))) {
            reader.start();
            Map<String, Object> conf = conf(zk.getPort(), 0.1);
            StormTopology t = TrafficHookTest.topology();
            TrafficHook spout = new TrafficHook();
            TrafficHook split = new TrafficHook();
            spout.prepare(conf, TrafficHookTest.context(t, conf, 2));
            split.prepare(conf, TrafficHookTest.context(t, conf, 3));
            WorkerMonitor m = WorkerMonitor.find(TOPO, PORT);
            LivePublisher live = m.livePublisher();
            assertNotNull(live);
            String path = "/scheduler-py/live/" + TOPO + "/127.0.0.9:" + PORT;
            assertEquals(path, live.path());

            spout.emit(new EmitInfo(Arrays.asList("x"), "default", 2, List.of(3)));
            spout.emit(new EmitInfo(Arrays.asList(1L, 2L, 2), "__ack_init", 2, List.of(1)));
            // both emits are in (a document written between them has emitted 1 and pending 0)
            ZkPublisherTest.waitFor(() -> counterOf(reader, path, 2, "pending") == 1, 20_000);
            Stat stat = new Stat();
            String json = new String(reader.getData().storingStatIn(stat).forPath(path), StandardCharsets.UTF_8);
            long session = m.zk().client().getZookeeperClient().getZooKeeper().getSessionId();
            assertEquals(session, stat.getEphemeralOwner(), "ephemeral, owned by the worker's session");
            Map<String, Object> doc = MiniJson.object(json);
            assertEquals(TOPO, doc.get("topology_id"));
            assertEquals(1L, byTask(json).get(2).get("emitted"));
            assertEquals(1L, byTask(json).get(2).get("pending"));
            assertEquals(Boolean.FALSE, byTask(json).get(3).get("spout"));
            long seq = (Long) doc.get("seq");
            ZkPublisherTest.waitFor(() -> seqOf(reader, path) > seq + 2, 20_000);
            assertTrue(seqOf(reader, path) > seq + 2, "rewritten every period with a new seq");
            Stat later = reader.checkExists().forPath(path);
            assertEquals(stat.getCzxid(), later.getCzxid(), "created once, then only setData");

            // deleted behind the worker's back: re-created
            reader.delete().forPath(path);
            ZkPublisherTest.waitFor(() -> exists(reader, path), 20_000);
            assertTrue(exists(reader, path));

            // a znode of another session on our path (an earlier worker of this slot): replaced by our own
            takeOver(reader, path);
            long readerSession = reader.getZookeeperClient().getZooKeeper().getSessionId();
            ZkPublisherTest.waitFor(() -> ownerOf(reader, path) == session, 20_000);
            assertEquals(session, ownerOf(reader, path));

            // the worker's session expires: ZooKeeper drops the znode, the monitor writes it again in a new session
            ZooKeeper own = m.zk().client().getZookeeperClient().getZooKeeper();
            CountDownLatch twinConnected = new CountDownLatch(1);
            ZooKeeper twin = new ZooKeeper("127.0.0.1:" + zk.getPort(), 5000, e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    twinConnected.countDown();
                }
            }, own.getSessionId(), own.getSessionPasswd());
            assertTrue(twinConnected.await(20, TimeUnit.SECONDS));
            twin.close();                                          // closing a session's twin expires it
            ZkPublisherTest.waitFor(() -> {
                long o = ownerOf(reader, path);
                return o != 0 && o != session && o != readerSession;
            }, 30_000);
            long newOwner = ownerOf(reader, path);
            assertNotEquals(session, newOwner, "re-created under the new session");
            assertEquals(m.zk().client().getZookeeperClient().getZooKeeper().getSessionId(), newOwner);
            assertEquals(1L, byTask(new String(reader.getData().forPath(path), StandardCharsets.UTF_8)).get(2)
                .get("emitted"), "the counters survive the session");

            // shutdown deletes it (not merely at session expiry)
            spout.cleanup();
            assertTrue(exists(reader, path), "still used by split");
            split.cleanup();
            assertFalse(exists(reader, path));
            assertNull(WorkerMonitor.find(TOPO, PORT));
        }
    }

    @Test
    void ownEphemeralIsDeletedOnlyWhenOurs() throws Exception {
        try (InProcessZookeeper zk = new InProcessZookeeper();
             CuratorFramework reader = CuratorFrameworkFactory.newClient("127.0.0.1:" + zk.getPort(), new RetryOneTime(100))) {
            reader.start();
            ZkPublisher p = new ZkPublisher(ZkPublisherTest.conf(zk.getPort()), List.of("127.0.0.1"), (int) zk.getPort(),
                "/r/monitor/t/s:1", 3, new OnceLog(LoggerFactory.getLogger(getClass())));
            try {
                String path = "/r/live/t/s:1";
                assertFalse(p.deleteOwnEphemeral(path), "no client yet");
                p.writeEphemeral(path, "{\"seq\": 0}".getBytes(StandardCharsets.UTF_8));
                p.writeEphemeral(path, "{\"seq\": 1}".getBytes(StandardCharsets.UTF_8));
                assertEquals("{\"seq\": 1}", new String(reader.getData().forPath(path), StandardCharsets.UTF_8));
                assertEquals(0, reader.checkExists().forPath("/r/live/t").getEphemeralOwner(), "parents persistent");
                assertTrue(p.deleteOwnEphemeral(path));
                assertFalse(p.deleteOwnEphemeral(path), "already gone");
                reader.create().withMode(CreateMode.EPHEMERAL).forPath(path);
                assertFalse(p.deleteOwnEphemeral(path), "not ours");
                assertTrue(exists(reader, path));
            } finally {
                p.stop();
            }
        }
    }

    /** Replace the znode by an ephemeral one of {@code c}'s session (retrying if the worker re-creates it in between). */
    static void takeOver(CuratorFramework c, String path) throws Exception {
        for (int attempt = 0; ; attempt++) {
            try {
                c.delete().forPath(path);
            } catch (KeeperException.NoNodeException e) {
                // gone already
            }
            try {
                c.create().withMode(CreateMode.EPHEMERAL).forPath(path, "{}".getBytes(StandardCharsets.UTF_8));
                return;
            } catch (KeeperException.NodeExistsException e) {
                if (attempt >= 20) {
                    throw e;
                }
            }
        }
    }

    static boolean exists(CuratorFramework c, String path) {
        try {
            return c.checkExists().forPath(path) != null;
        } catch (Exception e) {
            return false;
        }
    }

    static long ownerOf(CuratorFramework c, String path) {
        try {
            Stat s = c.checkExists().forPath(path);
            return s == null ? 0 : s.getEphemeralOwner();
        } catch (Exception e) {
            return 0;
        }
    }

    static long seqOf(CuratorFramework c, String path) {
        try {
            return (Long) MiniJson.object(new String(c.getData().forPath(path), StandardCharsets.UTF_8)).get("seq");
        } catch (Exception e) {
            return -1;
        }
    }

    static long counterOf(CuratorFramework c, String path, int task, String counter) {
        try {
            Map<String, Object> t = byTask(new String(c.getData().forPath(path), StandardCharsets.UTF_8)).get(task);
            return t == null ? -1 : (Long) t.get(counter);
        } catch (Exception e) {
            return -1;
        }
    }
}
