package io.schedulerpy.storm.monitor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The {@code scheduler.monitor.*} settings (read from the worker's topology configuration, i.e.
 * the supervisor's storm.yaml merged with the topology's conf) and their defaults. Unusable values
 * fall back to the defaults and are listed in {@link #problems()}.
 */
final class MonitorConfig {
    static final String WINDOW_SECS = "scheduler.monitor.window.secs";
    static final String SAMPLE_RATE = "scheduler.monitor.sample.rate";
    static final String ZK_ROOT = "scheduler.monitor.zk.root";
    static final String RETENTION_WINDOWS = "scheduler.monitor.retention.windows";
    static final String LOG_ENABLED = "scheduler.monitor.log.enabled";
    /** Period of the live counters znode ({@code docs/monitoring-format.md} §5); 0 or negative disables it. */
    static final String LIVE_SECS = "scheduler.monitor.live.secs";
    /** Extra (not in the contract): false = local log only, no ZooKeeper. */
    static final String ZK_ENABLED = "scheduler.monitor.zk.enabled";
    /** Extra: the ShellLogHandler {@link MonitorShellLogHandler} delegates the multilang log lines to. */
    static final String SHELL_LOG_DELEGATE = "scheduler.monitor.multilang.log.handler";
    /**
     * {@code counts} (default): Storm's own per-task counters, read by {@link CountsReporter}, no task hook;
     * {@code exact}: also the per-tuple {@link TrafficHook} (exact pairs, exact live counters).
     */
    static final String MODE = "scheduler.monitor.mode";
    static final String MODE_COUNTS = "counts";
    static final String MODE_EXACT = "exact";

    static final double DEFAULT_WINDOW_SECS = 10;
    static final double DEFAULT_SAMPLE_RATE = 0.01;
    static final String DEFAULT_ZK_ROOT = "/scheduler-py";
    static final int DEFAULT_RETENTION_WINDOWS = 30;
    static final double DEFAULT_LIVE_SECS = 1.0;
    /** Live periods are clamped to [0.1 s, 3600 s] (a shorter one would only load ZooKeeper). */
    static final long MIN_LIVE_MS = 100;
    static final long MAX_LIVE_MS = 3_600_000;

    /** Log rotation of the contract: 16 MB per file, 3 old files. */
    static final long LOG_MAX_BYTES = 16L * 1024 * 1024;
    static final int LOG_KEEP = 3;
    /** A znode record over this many bytes of JSON keeps only its top pairs by tuples. */
    static final int ZK_MAX_RECORD_BYTES = 512 * 1024;
    static final String LOG_FILE_NAME = "scheduler-py-monitor.jsonl";

    final long windowMs;
    final double sampleRate;
    final String zkRoot;
    final int retentionWindows;
    final boolean logEnabled;
    final boolean zkEnabled;
    /** Period of the live counters in ms; 0 = disabled. */
    final long liveMs;
    final List<String> zkServers;
    final Object zkPort;
    /** {@code scheduler.monitor.mode} is {@code exact}. */
    final boolean exact;
    private final List<String> problems = new ArrayList<>();

    MonitorConfig(Map<String, Object> conf) {
        Map<String, Object> c = conf == null ? Collections.emptyMap() : conf;
        double secs = number(c, WINDOW_SECS, DEFAULT_WINDOW_SECS);
        if (!(secs >= 1 && secs <= 3600)) {
            problems.add(WINDOW_SECS + "=" + c.get(WINDOW_SECS) + " is not in [1, 3600]; using " + DEFAULT_WINDOW_SECS);
            secs = DEFAULT_WINDOW_SECS;
        }
        windowMs = Math.round(secs * 1000);

        double rate = number(c, SAMPLE_RATE, DEFAULT_SAMPLE_RATE);
        if (rate > 1) {
            rate = 1.0 / rate;            // "100" = one in a hundred
        }
        if (!(rate >= 0)) {
            problems.add(SAMPLE_RATE + "=" + c.get(SAMPLE_RATE) + " is negative; using " + DEFAULT_SAMPLE_RATE);
            rate = DEFAULT_SAMPLE_RATE;
        }
        sampleRate = rate;

        zkRoot = normalizeRoot(c.get(ZK_ROOT));
        double retention = number(c, RETENTION_WINDOWS, DEFAULT_RETENTION_WINDOWS);
        if (!(retention >= 1 && retention <= 100_000)) {
            problems.add(RETENTION_WINDOWS + "=" + c.get(RETENTION_WINDOWS) + " is not in [1, 100000]; using "
                + DEFAULT_RETENTION_WINDOWS);
            retention = DEFAULT_RETENTION_WINDOWS;
        }
        retentionWindows = (int) retention;
        logEnabled = bool(c, LOG_ENABLED, true);
        zkEnabled = bool(c, ZK_ENABLED, true);
        liveMs = liveMs(number(c, LIVE_SECS, DEFAULT_LIVE_SECS), c.get(LIVE_SECS));

        List<String> servers = new ArrayList<>();
        Object s = c.get("storm.zookeeper.servers");
        if (s instanceof List) {
            for (Object o : (List<?>) s) {
                if (o != null && !o.toString().isBlank()) {
                    servers.add(o.toString().trim());
                }
            }
        }
        zkServers = Collections.unmodifiableList(servers);
        zkPort = c.getOrDefault("storm.zookeeper.port", 2181);
        exact = mode(c.get(MODE));
    }

    private boolean mode(Object value) {
        if (value == null) {
            return false;
        }
        String m = value.toString().trim().toLowerCase();
        if (m.equals(MODE_EXACT)) {
            return true;
        }
        if (!m.equals(MODE_COUNTS)) {
            problems.add(MODE + "=" + value + " is neither " + MODE_COUNTS + " nor " + MODE_EXACT + "; using " + MODE_COUNTS);
        }
        return false;
    }

    private long liveMs(double secs, Object raw) {
        if (secs <= 0) {
            return 0;
        }
        long ms = Math.round(secs * 1000);
        if (ms < MIN_LIVE_MS || ms > MAX_LIVE_MS) {
            long clamped = Math.max(MIN_LIVE_MS, Math.min(MAX_LIVE_MS, ms));
            problems.add(LIVE_SECS + "=" + raw + " is not in [0.1, 3600] (or <= 0 to disable); using "
                + clamped / 1000.0);
            return clamped;
        }
        return ms;
    }

    List<String> problems() {
        return Collections.unmodifiableList(problems);
    }

    private String normalizeRoot(Object value) {
        if (value == null) {
            return DEFAULT_ZK_ROOT;
        }
        String root = value.toString().trim();
        while (root.endsWith("/")) {
            root = root.substring(0, root.length() - 1);
        }
        if (root.isEmpty() || !root.startsWith("/") || root.contains("//")) {
            problems.add(ZK_ROOT + "=" + value + " is not an absolute ZooKeeper path; using " + DEFAULT_ZK_ROOT);
            return DEFAULT_ZK_ROOT;
        }
        return root;
    }

    private double number(Map<String, Object> c, String key, double dflt) {
        Object v = c.get(key);
        if (v == null) {
            return dflt;
        }
        try {
            double d = v instanceof Number ? ((Number) v).doubleValue() : Double.parseDouble(v.toString().trim());
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            problems.add(key + "=" + v + " is not a number; using " + dflt);
            return dflt;
        }
    }

    private boolean bool(Map<String, Object> c, String key, boolean dflt) {
        Object v = c.get(key);
        if (v == null) {
            return dflt;
        }
        if (v instanceof Boolean) {
            return (Boolean) v;
        }
        String s = v.toString().trim().toLowerCase();
        if (s.equals("true") || s.equals("yes") || s.equals("1")) {
            return true;
        }
        if (s.equals("false") || s.equals("no") || s.equals("0")) {
            return false;
        }
        problems.add(key + "=" + v + " is not a boolean; using " + dflt);
        return dflt;
    }

    @Override
    public String toString() {
        return "window=" + windowMs + "ms sampleRate=" + sampleRate + " zkRoot=" + zkRoot
            + " retention=" + retentionWindows + " log=" + logEnabled + " zk=" + (zkEnabled ? zkServers + ":" + zkPort : "off")
            + " live=" + (liveMs > 0 ? liveMs + "ms" : "off") + " mode=" + (exact ? MODE_EXACT : MODE_COUNTS);
    }
}
