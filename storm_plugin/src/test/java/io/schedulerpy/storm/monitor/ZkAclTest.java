package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFramework;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.storm.shade.org.apache.curator.retry.RetryOneTime;
import org.apache.storm.shade.org.apache.zookeeper.KeeperException;
import org.apache.storm.testing.InProcessZookeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** The worker monitor's znodes under a digest ACL, against a real (in-process) ZooKeeper. */
class ZkAclTest {
    @TempDir
    Path tmp;

    @Test
    void digestIdIsZooKeepersAndThePythonSides() {
        // the same value kazoo's make_digest_acl_credential("u", "p") gives (scheduler_py/monitoring/zk_acl.py)
        assertEquals("u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ=", ZkAcl.digestId("u:p"));
    }

    @Test
    void noFileMeansNoAclAndABadFileIsAClearError() throws Exception {
        assertNull(ZkAcl.fromConf(Map.of()));
        Path empty = Files.writeString(tmp.resolve("empty"), "");
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> ZkAcl.fromConf(Map.of(ZkAcl.DIGEST_FILE, empty.toString())));
        assertTrue(e.getMessage().contains("expected one line user:password"), e.getMessage());
        e = assertThrows(IllegalStateException.class,
            () -> ZkAcl.fromConf(Map.of(ZkAcl.DIGEST_FILE, tmp.resolve("missing").toString())));
        assertTrue(e.getMessage().contains("cannot read"), e.getMessage());
    }

    @Test
    void anUnauthenticatedClientCannotOverwriteWindowsOrLiveCounters() throws Exception {
        Path secret = Files.writeString(tmp.resolve("zk.digest"), "scheduler:s3cret\n");
        try (InProcessZookeeper zk = new InProcessZookeeper();
             CuratorFramework stranger = CuratorFrameworkFactory.newClient("127.0.0.1:" + zk.getPort(),
                 new RetryOneTime(100))) {
            stranger.start();
            Map<String, Object> conf = ZkPublisherTest.conf(zk.getPort());
            conf.put(ZkAcl.DIGEST_FILE, secret.toString());
            String dir = ZkPublisher.workerDir("/scheduler-py", "wc-1-2", "sup-a:6700");
            String live = "/scheduler-py/live/wc-1-2/sup-a:6700";
            ZkPublisher p = new ZkPublisher(conf, List.of("127.0.0.1"), (int) zk.getPort(), dir, 3,
                new OnceLog(LoggerFactory.getLogger(getClass())));
            p.start();
            try {
                p.offer(10_000L, "{\"v\": 1}");
                ZkPublisherTest.waitFor(() -> p.published() == 1, 20_000);
                assertEquals(1, p.published());
                byte[] counters = "{\"ts_ms\": 1}".getBytes(StandardCharsets.UTF_8);
                p.writeEphemeral(live, counters);

                byte[] fake = "fake".getBytes(StandardCharsets.UTF_8);
                assertArrayEquals(counters, stranger.getData().forPath(live)); // the world may read
                assertThrows(KeeperException.NoAuthException.class, () -> stranger.setData().forPath(live, fake));
                assertThrows(KeeperException.NoAuthException.class, () -> stranger.delete().forPath(live));
                assertThrows(KeeperException.NoAuthException.class,
                    () -> stranger.setData().forPath(dir + "/w-10000", fake));
                assertThrows(KeeperException.NoAuthException.class,
                    () -> stranger.create().forPath(dir + "/w-20000", fake));
                assertThrows(KeeperException.NoAuthException.class,
                    () -> stranger.create().forPath("/scheduler-py/live/wc-1-2/sup-b:6700", fake));
                assertThrows(KeeperException.NoAuthException.class,
                    () -> stranger.create().forPath("/scheduler-py/aggregate", fake));
                // the publisher itself still rewrites and prunes its znodes
                p.writeEphemeral(live, fake);
                assertArrayEquals(fake, stranger.getData().forPath(live));
            } finally {
                p.stop();
            }
        }
    }

    @Test
    void withoutWorldReadOnlyTheCredentialReads() throws Exception {
        Path secret = Files.writeString(tmp.resolve("zk.digest"), "scheduler:s3cret\n");
        try (InProcessZookeeper zk = new InProcessZookeeper();
             CuratorFramework stranger = CuratorFrameworkFactory.newClient("127.0.0.1:" + zk.getPort(),
                 new RetryOneTime(100))) {
            stranger.start();
            Map<String, Object> conf = ZkPublisherTest.conf(zk.getPort());
            conf.put(ZkAcl.DIGEST_FILE, secret.toString());
            conf.put(ZkAcl.WORLD_READ, "false");
            String live = "/scheduler-py/live/wc-1-2/sup-a:6700";
            ZkPublisher p = new ZkPublisher(conf, List.of("127.0.0.1"), (int) zk.getPort(),
                ZkPublisher.workerDir("/scheduler-py", "wc-1-2", "sup-a:6700"), 3,
                new OnceLog(LoggerFactory.getLogger(getClass())));
            p.start();
            try {
                p.writeEphemeral(live, "{}".getBytes(StandardCharsets.UTF_8));
                assertThrows(KeeperException.NoAuthException.class, () -> stranger.getData().forPath(live));
            } finally {
                p.stop();
            }
        }
    }
}
