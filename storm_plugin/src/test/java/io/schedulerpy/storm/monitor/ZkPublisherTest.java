package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFramework;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.storm.shade.org.apache.curator.retry.RetryOneTime;
import org.apache.storm.testing.InProcessZookeeper;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class ZkPublisherTest {
    static String gunzip(byte[] data) throws IOException {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(data))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static Map<String, Object> conf(long zkPort) {
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put("storm.zookeeper.servers", List.of("127.0.0.1"));
        conf.put("storm.zookeeper.port", (int) zkPort);
        return conf;
    }

    static void waitFor(java.util.function.BooleanSupplier cond, long ms) throws InterruptedException {
        long deadline = System.currentTimeMillis() + ms;
        while (!cond.getAsBoolean() && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
    }

    @Test
    void retentionKeepsTheNewestWindowsOnly() {
        List<String> children = List.of("w-100", "w-300", "w-200", "other", "w-x", "w-400");
        assertEquals(List.of("w-200", "w-100"), ZkPublisher.olderThanRetention(children, 2));
        assertEquals(List.of(), ZkPublisher.olderThanRetention(children, 30));
        assertEquals(List.of("w-400", "w-300", "w-200", "w-100"), ZkPublisher.olderThanRetention(children, 0));
    }

    @Test
    void publishesGzippedRecordsAndPrunes() throws Exception {
        try (InProcessZookeeper zk = new InProcessZookeeper();
             CuratorFramework reader = CuratorFrameworkFactory.newClient("127.0.0.1:" + zk.getPort(), new RetryOneTime(100))) {
            reader.start();
            String dir = ZkPublisher.workerDir("/scheduler-py", "wc-1-2", "sup-a:6700");
            assertEquals("/scheduler-py/monitor/wc-1-2/sup-a:6700", dir);
            ZkPublisher p = new ZkPublisher(conf(zk.getPort()), List.of("127.0.0.1"), (int) zk.getPort(), dir, 3,
                new OnceLog(LoggerFactory.getLogger(getClass())));
            p.start();
            try {
                for (int i = 1; i <= 5; i++) {
                    p.offer(i * 10_000L, "{\"v\": 1, \"seq\": " + i + "}");
                }
                waitFor(() -> p.published() == 5, 20_000);
                assertEquals(5, p.published());
                List<String> children = new ArrayList<>(reader.getChildren().forPath(dir));
                children.sort(null);
                assertEquals(List.of("w-30000", "w-40000", "w-50000"), children);
                assertEquals("{\"v\": 1, \"seq\": 5}", gunzip(reader.getData().forPath(dir + "/w-50000")));
                // the same window again overwrites
                p.offer(50_000L, "{\"v\": 1, \"seq\": 6}");
                waitFor(() -> p.published() == 6, 20_000);
                assertEquals("{\"v\": 1, \"seq\": 6}", gunzip(reader.getData().forPath(dir + "/w-50000")));
            } finally {
                p.stop();
            }
        }
    }

    @Test
    void zooKeeperDownQueuesWithoutBlockingTheCaller() throws Exception {
        Map<String, Object> conf = conf(1);
        conf.put("storm.zookeeper.connection.timeout", 200);
        conf.put("storm.zookeeper.session.timeout", 400);
        conf.put("storm.zookeeper.retry.times", 0);
        ZkPublisher p = new ZkPublisher(conf, List.of("127.0.0.1"), 1, "/scheduler-py/monitor/t/s:1", 3,
            new OnceLog(LoggerFactory.getLogger(getClass())));
        p.start();
        try {
            long t0 = System.nanoTime();
            for (int i = 0; i < 100; i++) {
                p.offer(i, "{}");
            }
            assertTrue((System.nanoTime() - t0) / 1e6 < 2000, "offer never blocks");
            assertEquals(0, p.published());
            assertTrue(p.dropped() >= 100 - 17, "the oldest records are dropped: " + p.dropped());
        } finally {
            p.stop();
        }
    }
}
