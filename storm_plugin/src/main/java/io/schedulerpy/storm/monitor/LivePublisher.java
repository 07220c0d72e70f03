package io.schedulerpy.storm.monitor;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a worker's live counters ({@code docs/monitoring-format.md} §5) to its EPHEMERAL znode
 * {@code <root>/live/<topology-id>/<supervisor-id>:<port>} every {@code scheduler.monitor.live.secs},
 * on a daemon thread of its own ({@code scheduler-py-monitor-live}; never an executor thread, and
 * independent of the window loop), through the {@link ZkPublisher}'s ZooKeeper client. Writes use a
 * fixed delay, so a ZooKeeper outage yields one attempt per period after it, not a burst. Failures
 * are logged once and retried next period; on {@link #stop} the znode is deleted if possible (it is
 * ephemeral anyway).
 */
final class LivePublisher {
    private static final Logger LOG = LoggerFactory.getLogger(LivePublisher.class);
    /** How long {@link #stop} waits for the znode's deletion (Storm's worker shutdown must not hang on it). */
    static final long STOP_WAIT_MS = 2000;

    private final ZkPublisher zk;
    private final String path;
    private final long periodMs;
    private final LongFunction<String> document;
    private final OnceLog problems;
    private final ScheduledExecutorService timer;
    private volatile boolean stopped;
    private long seq;
    private volatile long published;

    /**
     * @param document builds the JSON for a sequence number (called on the publisher's thread)
     */
    LivePublisher(ZkPublisher zk, String path, long periodMs, LongFunction<String> document, OnceLog problems) {
        this.zk = zk;
        this.path = path;
        this.periodMs = periodMs;
        this.document = document;
        this.problems = problems;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "scheduler-py-monitor-live");
            t.setDaemon(true);
            return t;
        });
    }

    String path() {
        return path;
    }

    long published() {
        return published;
    }

    void start() {
        timer.scheduleWithFixedDelay(this::publishQuietly, 0, periodMs, TimeUnit.MILLISECONDS);
    }

    private void publishQuietly() {
        if (stopped) {
            return;
        }
        try {
            publish();
            if (problems.hasSeen("zk-live")) {
                LOG.info("scheduler-py monitor: publishing live counters to ZooKeeper again ({})", path);
                problems.clear("zk-live");
            }
        } catch (Throwable t) {
            if (!stopped) {
                problems.warn("zk-live", "scheduler-py monitor: cannot write the live counters " + path
                    + " (retrying every " + periodMs + " ms)", t);
            }
        }
    }

    /** Build the next document and write it (on the caller's thread; tests call it directly). */
    synchronized void publish() throws Exception {
        String json = document.apply(seq++);
        zk.writeEphemeral(path, json.getBytes(StandardCharsets.UTF_8));
        published++;
    }

    /** Stop writing, delete the znode if it is still ours (waiting at most {@link #STOP_WAIT_MS}). */
    void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            timer.submit(() -> {
                try {
                    zk.deleteOwnEphemeral(path);
                } catch (Throwable t) {
                    LOG.debug("scheduler-py monitor: cannot delete {} ({}); it goes with the session", path,
                        OnceLog.describe(t));
                }
            });
            timer.shutdown();
            if (!timer.awaitTermination(STOP_WAIT_MS, TimeUnit.MILLISECONDS)) {
                timer.shutdownNow();
            }
        } catch (InterruptedException e) {
            timer.shutdownNow();
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            timer.shutdownNow();
        }
    }
}
