package io.schedulerpy.storm.monitor;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFramework;
import org.apache.storm.shade.org.apache.zookeeper.CreateMode;
import org.apache.storm.shade.org.apache.zookeeper.KeeperException;
import org.apache.storm.shade.org.apache.zookeeper.data.Stat;
import org.apache.storm.utils.CuratorUtils;
import org.apache.storm.utils.ZookeeperAuthInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes window records to ZooKeeper from its own daemon thread, so a slow or dead ZooKeeper
 * never delays the window loop: {@code <root>/monitor/<topology-id>/<worker>/w-<window_end_ms>},
 * gzip of the record's UTF-8 JSON, persistent; after each write it deletes the worker's window
 * znodes beyond the newest {@code retention}. Records wait in a small queue (the oldest is dropped
 * when it is full) while ZooKeeper is unreachable.
 *
 * <p>The same client also keeps the worker's ephemeral live-counters znode ({@link #writeEphemeral},
 * called from {@link LivePublisher}'s thread; Curator clients are thread-safe).
 *
 * <p>Uses Storm's shaded Curator through {@link CuratorUtils#newCurator} with the worker's
 * {@code storm.zookeeper.*} settings and {@link ZookeeperAuthInfo} (topology auth when set), but
 * with its own root ({@code scheduler.monitor.zk.root}), not {@code storm.zookeeper.root}. With
 * {@code scheduler.monitor.zk.digest.file} set, it authenticates with that digest credential instead
 * and creates every znode writable only with it ({@link ZkAcl}).
 */
final class ZkPublisher {
    private static final Logger LOG = LoggerFactory.getLogger(ZkPublisher.class);
    static final Pattern WINDOW_NODE = Pattern.compile("^w-(\\d+)$");
    private static final int QUEUE = 16;
    private static final long RETRY_PAUSE_MS = 5000;

    private record Item(String path, byte[] data) {
    }

    private final Map<String, Object> conf;
    private final List<String> servers;
    private final Object port;
    private final String dir;
    private final int retention;
    private final OnceLog problems;
    private final LinkedBlockingDeque<Item> queue = new LinkedBlockingDeque<>(QUEUE);
    private final Thread thread;
    private volatile boolean stopped;
    private volatile CuratorFramework client;
    private volatile long published;
    private volatile long dropped;

    /**
     * @param dir the worker's directory, {@code <root>/monitor/<topology-id>/<supervisor-id>:<port>}
     */
    ZkPublisher(Map<String, Object> conf, List<String> servers, Object port, String dir, int retention, OnceLog problems) {
        this.conf = conf;
        this.servers = servers;
        this.port = port;
        this.dir = dir;
        this.retention = retention;
        this.problems = problems;
        this.thread = new Thread(this::run, "scheduler-py-monitor-zk");
        this.thread.setDaemon(true);
    }

    static String workerDir(String root, String topologyId, String workerName) {
        return root + "/monitor/" + topologyId + "/" + workerName;
    }

    String dir() {
        return dir;
    }

    long published() {
        return published;
    }

    long dropped() {
        return dropped;
    }

    void start() {
        thread.start();
    }

    /** Queue a record (never blocks). */
    void offer(long windowEndMs, String json) {
        byte[] data;
        try {
            data = gzip(json);
        } catch (IOException e) {
            problems.warn("zk-gzip", "scheduler-py monitor: cannot gzip a record", e);
            return;
        }
        Item item = new Item(dir + "/w-" + windowEndMs, data);
        while (!queue.offerLast(item)) {
            if (queue.pollFirst() != null) {
                dropped++;
                problems.warn("zk-queue-full", "scheduler-py monitor: ZooKeeper is behind; dropping the oldest "
                    + "unpublished windows (they stay in the local monitor log)", null);
            }
        }
    }

    void stop() {
        stopped = true;
        thread.interrupt();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        CuratorFramework c;
        synchronized (this) {
            c = client;
            client = null;
        }
        if (c != null) {
            try {
                c.close();
            } catch (Throwable t) {
                // ignore
            }
        }
    }

    private void run() {
        while (!stopped) {
            Item item;
            try {
                item = queue.pollFirst(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                break;
            }
            if (item == null) {
                continue;
            }
            try {
                publish(item);
                published++;
                if (problems.hasSeen("zk-publish")) {
                    LOG.info("scheduler-py monitor: publishing to ZooKeeper again ({})", dir);
                    problems.clear("zk-publish");
                }
            } catch (InterruptedException e) {
                break;
            } catch (Throwable t) {
                problems.warn("zk-publish", "scheduler-py monitor: cannot publish to ZooKeeper " + servers + ":" + port
                    + " (records are kept in the local monitor log; retrying)", t);
                if (!queue.offerFirst(item)) {
                    dropped++;
                }
                try {
                    Thread.sleep(RETRY_PAUSE_MS);
                } catch (InterruptedException e) {
                    break;
                }
            }
        }
    }

    /** The (started) client, created on first use; throws once the publisher is stopped. */
    synchronized CuratorFramework client() {
        if (stopped) {
            throw new IllegalStateException("the ZooKeeper publisher is stopped");
        }
        CuratorFramework c = client;
        if (c == null) {
            ZkAcl acl = ZkAcl.fromConf(conf); // digest ACL when configured (ZkAcl)
            c = acl == null
                ? CuratorUtils.newCurator(conf, servers, port, "", new ZookeeperAuthInfo(conf), null)
                : CuratorUtils.newCurator(conf, servers, port, "", acl.auth(), acl.acl());
            c.start();
            client = c;
        }
        return c;
    }

    private void publish(Item item) throws Exception {
        CuratorFramework c = client();
        try {
            c.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(item.path, item.data);
        } catch (KeeperException.NodeExistsException e) {
            c.setData().forPath(item.path, item.data);
        }
        prune(c);
    }

    /**
     * Write {@code data} to the EPHEMERAL znode {@code path} of this client's session (parents are
     * created persistent). Normally one {@code setData}; the znode is (re)created when it is missing
     * (first write, or deleted with the session that owned it after a session loss), and replaced when
     * it belongs to another session (one this client lost, or an earlier worker on the same slot whose
     * session has not expired yet), so it always disappears with this worker. Blocks up to Curator's
     * connection timeout and retries; call it from a thread of the monitor's own.
     */
    void writeEphemeral(String path, byte[] data) throws Exception {
        CuratorFramework c = client();
        try {
            Stat s = c.setData().forPath(path, data);
            long session = c.getZookeeperClient().getZooKeeper().getSessionId();
            if (s.getEphemeralOwner() == session) {
                return;
            }
            try {
                c.delete().withVersion(s.getVersion()).forPath(path);
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                // gone or rewritten meanwhile: create below (or find it again next time)
            }
        } catch (KeeperException.NoNodeException e) {
            // first write, or lost with an expired session
        }
        try {
            c.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path, data);
        } catch (KeeperException.NodeExistsException e) {
            c.setData().forPath(path, data);     // raced with another writer; the owner is checked next time
        }
    }

    /** Delete {@code path} if it is an ephemeral znode of this client's current session (false if not or missing). */
    boolean deleteOwnEphemeral(String path) throws Exception {
        CuratorFramework c = client;
        if (c == null || stopped) {
            return false;
        }
        Stat s = c.checkExists().forPath(path);
        if (s == null || s.getEphemeralOwner() != c.getZookeeperClient().getZooKeeper().getSessionId()) {
            return false;
        }
        try {
            c.delete().withVersion(s.getVersion()).forPath(path);
            return true;
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
            return false;
        }
    }

    private void prune(CuratorFramework c) throws Exception {
        List<String> children = c.getChildren().forPath(dir);
        for (String old : olderThanRetention(children, retention)) {
            try {
                c.delete().forPath(dir + "/" + old);
            } catch (KeeperException.NoNodeException e) {
                // deleted meanwhile
            }
        }
    }

    /** The window znode names beyond the newest {@code retention} (others are left alone). */
    static List<String> olderThanRetention(List<String> children, int retention) {
        List<long[]> windows = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (String ch : children) {
            Matcher m = WINDOW_NODE.matcher(ch);
            if (m.matches()) {
                try {
                    windows.add(new long[]{Long.parseLong(m.group(1)), names.size()});
                    names.add(ch);
                } catch (NumberFormatException e) {
                    // not ours
                }
            }
        }
        windows.sort((a, b) -> Long.compare(b[0], a[0]));
        List<String> out = new ArrayList<>();
        for (int i = retention; i < windows.size(); i++) {
            out.add(names.get((int) windows.get(i)[1]));
        }
        return out;
    }

    static byte[] gzip(String json) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(Math.max(64, json.length() / 4));
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
            gz.write(json.getBytes(StandardCharsets.UTF_8));
        }
        return bytes.toByteArray();
    }
}
