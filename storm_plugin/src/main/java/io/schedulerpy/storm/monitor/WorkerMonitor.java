package io.schedulerpy.storm.monitor;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.storm.task.WorkerTopologyContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The per-worker monitor: one per (topology, port) in a JVM, started by whichever comes first: the
 * worker's {@link CountsReporter} (counts mode, the default: Storm's own counters, no task hook) or
 * the {@link TrafficHook} of a task (exact mode); both may feed one monitor, and the record then
 * carries both Storm's task counts and the hooks' exact pairs. It owns the traffic counters, the
 * CPU sampler, the Netty totals ({@link NettySent} through Storm's registry, {@link NettyWrites} from
 * {@code /proc/self/task}) and one daemon thread
 * ({@code scheduler-py-monitor}) that closes a window every {@code scheduler.monitor.window.secs}
 * (on multiples of the window length), appends the record to the monitor log and hands it to the
 * ZooKeeper publisher. It also owns the worker's {@link LiveCounters} and, when ZooKeeper is on and
 * {@code scheduler.monitor.live.secs} &gt; 0, the {@link LivePublisher} that writes them to an
 * ephemeral znode about once per second. Nothing here throws into Storm: failures are logged once
 * and the monitor degrades (no ZooKeeper → local log only, no live counters; no log → ZooKeeper
 * only; a failing window is skipped).
 */
final class WorkerMonitor {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerMonitor.class);
    private static final ConcurrentHashMap<String, WorkerMonitor> MONITORS = new ConcurrentHashMap<>();
    /** pid → task registered by the ShellLogHandler, per worker key (kept even before the monitor exists). */
    private static final ConcurrentHashMap<String, Map<Long, Integer>> PIDS = new ConcurrentHashMap<>();
    /** task → thread-id watermark of each ShellBolt's prepare, per worker key (see {@link #registerShellBolt}). */
    private static final ConcurrentHashMap<String, Map<Integer, Long>> SHELL_BOLTS = new ConcurrentHashMap<>();

    final String key;
    final MonitorConfig config;
    final WorkerIdentity identity;
    final OnceLog problems = new OnceLog(LOG);
    private final TrafficCounters traffic = new TrafficCounters();
    private final LiveCounters live = new LiveCounters();
    private final Map<Long, Integer> hookThreads = new ConcurrentHashMap<>();
    private final Map<Long, Integer> pids;
    private final WorkerView view;
    private final CpuSampler cpu;
    /** Messages the Netty clients sent per window, from Storm's gauges (read through {@link #counts}). */
    private final NettySent nettySent = new NettySent();
    /** Bytes the Netty client threads wrote per window, from {@code /proc/self/task}. */
    private final NettyWrites nettyWrites;
    /** Storm's counters (counts mode), attached by the worker's {@link CountsReporter}; null without it. */
    private volatile CountsSource counts;
    /** Whether a task hook counts traffic in this worker (exact mode). */
    private volatile boolean hooked;
    private final double statsSampleRate;
    private final boolean loadAware;
    private final RotatingLog log;
    private final ZkPublisher zk;
    private final LivePublisher livePublisher;
    /** When the monitor started (the live document's {@code started_ms}). */
    private volatile long startedMs;
    private final AtomicInteger users = new AtomicInteger();
    private final Thread loop;
    /**
     * Stops the monitor when the worker JVM shuts down. The supervisor kills a worker it no longer
     * runs and Storm's own shutdown hook halts the JVM one second later, before it stops the
     * metrics reporters: without this the live znode would outlive the worker until its ZooKeeper
     * session expires, and a reconfiguration waiting for the old workers to be gone would wait that long.
     */
    private final Thread onShutdown = new Thread(this::stop, "scheduler-py-monitor-shutdown");
    private volatile boolean stopped;
    private long seq;
    private String loggedAttribution = "";
    private int attributionLogs;
    private long windowStartMs;
    /** Test hook: receives every record (as JSON) after it was written. */
    volatile Consumer<String> listener;

    static String key(String topologyId, Integer port) {
        return topologyId + ":" + port;
    }

    /**
     * The monitor of the worker of {@code context} for a task hook (exact mode), created and started
     * on first use; counted until {@link #release}.
     */
    static WorkerMonitor acquire(Map<String, Object> conf, WorkerTopologyContext context) {
        String k = key(context.getStormId(), context.getThisWorkerPort());
        WorkerMonitor m = MONITORS.computeIfAbsent(k, x -> {
            WorkerMonitor created = new WorkerMonitor(x, conf, context.getStormId(),
                context.getThisWorkerPort() == null ? -1 : context.getThisWorkerPort(), context.getAssignmentId(),
                WorkerView.of(context));
            created.start();
            return created;
        });
        m.users.incrementAndGet();
        m.hooked = true;
        return m;
    }

    /**
     * The monitor of worker {@code topologyId}:{@code port} for its {@link CountsReporter} (counts mode),
     * created and started on first use with {@code view}, fed by {@code source}; counted until {@link #release}.
     */
    static WorkerMonitor acquireCounts(Map<String, Object> conf, String topologyId, int port, WorkerView view,
                                       CountsSource source) {
        WorkerMonitor m = MONITORS.computeIfAbsent(key(topologyId, port), x -> {
            WorkerMonitor created = new WorkerMonitor(x, conf, topologyId, port, null, view);
            created.counts = source;
            created.start();
            return created;
        });
        m.counts = source;
        m.users.incrementAndGet();
        return m;
    }

    /** The running monitor of a worker, or null. */
    static WorkerMonitor find(String topologyId, Integer port) {
        return MONITORS.get(key(topologyId, port));
    }

    /** Record that multilang subprocess {@code pid} belongs to {@code task} (from the ShellLogHandler). */
    static void registerSubprocess(String topologyId, Integer port, long pid, int task) {
        PIDS.computeIfAbsent(key(topologyId, port), x -> new ConcurrentHashMap<>()).put(pid, task);
    }

    /**
     * Record that the ShellBolt of {@code task} is about to start its reader and writer threads, whose
     * ids will be above {@code watermark} (from the ShellLogHandler, called by {@code ShellBolt.prepare}
     * just before it creates them): {@link CpuSampler} attributes them without a task hook.
     */
    static void registerShellBolt(String topologyId, Integer port, int task, long watermark) {
        SHELL_BOLTS.computeIfAbsent(key(topologyId, port), x -> new ConcurrentHashMap<>()).put(task, watermark);
    }

    WorkerMonitor(String key, Map<String, Object> conf, String topologyId, int port, String assignmentId,
                  WorkerView view) {
        this.key = key;
        this.config = new MonitorConfig(conf);
        for (String p : config.problems()) {
            problems.warn("config-" + p, "scheduler-py monitor: " + p, null);
        }
        this.identity = WorkerIdentity.resolve(conf, topologyId, port, assignmentId);
        this.view = view;
        this.statsSampleRate = statsSampleRate(conf);
        this.loadAware = !Boolean.TRUE.equals(bool(conf == null ? null : conf.get("topology.disable.loadaware.messaging")));
        if (identity.supervisorIdIsHost) {
            problems.warn("supervisor-id", "scheduler-py monitor: supervisor id not found on the worker's command "
                + "line; using the host '" + identity.host + "' in its place", null);
        }
        this.pids = PIDS.computeIfAbsent(key, x -> new ConcurrentHashMap<>());
        this.cpu = new CpuSampler(view, hookThreads, pids, problems,
            SHELL_BOLTS.computeIfAbsent(key, x -> new ConcurrentHashMap<>()));
        this.nettyWrites = new NettyWrites(problems);
        this.log = config.logEnabled
            ? new RotatingLog(identity.artifactsDir.resolve(MonitorConfig.LOG_FILE_NAME), MonitorConfig.LOG_MAX_BYTES,
                MonitorConfig.LOG_KEEP)
            : null;
        ZkPublisher z = null;
        if (config.zkEnabled && !config.zkServers.isEmpty()) {
            z = new ZkPublisher(conf, config.zkServers, config.zkPort,
                ZkPublisher.workerDir(config.zkRoot, identity.topologyId, identity.workerName()),
                config.retentionWindows, problems);
        } else if (config.zkEnabled) {
            problems.warn("zk-servers", "scheduler-py monitor: storm.zookeeper.servers is not set; records go to "
                + "the local monitor log only", null);
        }
        this.zk = z;
        this.livePublisher = z != null && config.liveMs > 0
            ? new LivePublisher(z, LiveRecord.path(config.zkRoot, identity.topologyId, identity.workerName()),
                config.liveMs, this::liveJson, problems)
            : null;
        this.loop = new Thread(this::run, "scheduler-py-monitor");
        this.loop.setDaemon(true);
    }

    TrafficCounters traffic() {
        return traffic;
    }

    ZkPublisher zk() {
        return zk;
    }

    LiveCounters live() {
        return live;
    }

    LivePublisher livePublisher() {
        return livePublisher;
    }

    long startedMs() {
        return startedMs;
    }

    /**
     * The live counters document now, with sequence number {@code seq} (§5 of the format): the hooks'
     * exact counters when a hook runs in this worker, else Storm's counters and queues (counts mode).
     */
    LiveRecord liveRecord(long seq) {
        CountsSource c = counts;
        List<LiveCounters.Snapshot> tasks = hooked || c == null ? live.snapshot() : c.live(view);
        return new LiveRecord(identity.topologyId, identity.supervisorId, identity.host, identity.port,
            System.currentTimeMillis(), startedMs, seq, tasks, identity.supervisorThriftPort);
    }

    boolean hooked() {
        return hooked;
    }

    CountsSource counts() {
        return counts;
    }

    /** Storm's {@code topology.stats.sample.rate} (Storm's default 0.05 when unset or unusable). */
    static double statsSampleRate(Map<String, Object> conf) {
        Object v = conf == null ? null : conf.get("topology.stats.sample.rate");
        try {
            double d = v instanceof Number ? ((Number) v).doubleValue() : Double.parseDouble(String.valueOf(v));
            return d > 0 && d <= 1 ? d : 0.05;
        } catch (NumberFormatException e) {
            return 0.05;
        }
    }

    private static Boolean bool(Object v) {
        if (v == null) {
            return null;
        }
        return v instanceof Boolean ? (Boolean) v : Boolean.valueOf(v.toString().trim());
    }

    private String liveJson(long seq) {
        return liveRecord(seq).toJson();
    }

    RotatingLog log() {
        return log;
    }

    /** A thread called a hook of {@code task} (cheap; the hook calls it only when its thread changes). */
    void noteThread(long threadId, int task) {
        hookThreads.putIfAbsent(threadId, task);
    }

    private void start() {
        synchronized (this) {
            cpu.sample();                                    // baselines
            windowStartMs = System.currentTimeMillis();
            startedMs = windowStartMs;
        }
        if (zk != null) {
            zk.start();
        }
        if (livePublisher != null) {
            livePublisher.start();
        }
        loop.start();
        try {
            Runtime.getRuntime().addShutdownHook(onShutdown);
        } catch (IllegalStateException | SecurityException e) {
            problems.warn("shutdown-hook", "scheduler-py monitor: cannot register its shutdown hook; its live znode "
                + "goes with the ZooKeeper session when the worker stops", e);
        }
        LOG.info("scheduler-py monitor started for {} on {} (host {}, port {}): {}; log {}; znodes {}; live {}",
            identity.topologyId, identity.workerName(), identity.host, identity.port, config,
            log == null ? "off" : log.file(), zk == null ? "off" : zk.dir(),
            livePublisher == null ? "off" : livePublisher.path());
    }

    void release() {
        if (users.decrementAndGet() <= 0) {
            MONITORS.remove(key, this);
            stop();
            try {
                Runtime.getRuntime().removeShutdownHook(onShutdown);
            } catch (IllegalStateException | SecurityException e) {
                // the JVM is shutting down already: the hook runs (stop() again does nothing)
            }
        }
    }

    void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        loop.interrupt();
        if (livePublisher != null) {
            livePublisher.stop();                      // deletes the znode while the client is still open
        }
        if (zk != null) {
            zk.stop();
        }
    }

    private void run() {
        while (!stopped) {
            try {
                Thread.sleep(WindowClock.delayToNextBoundary(System.currentTimeMillis(), config.windowMs));
            } catch (InterruptedException e) {
                break;
            }
            if (stopped) {
                break;
            }
            try {
                closeWindow();
            } catch (Throwable t) {
                problems.warn("window", "scheduler-py monitor: a window failed and was skipped", t);
            }
        }
    }

    /** Close the current window: measure, build the record, log it, queue it for ZooKeeper. */
    synchronized WindowRecord closeWindow() {
        CpuSampler.Result c = cpu.sample();
        List<TrafficCounters.Entry> t = traffic.drain();
        CountsSource source = counts;
        List<TaskCounts> taskCounts = List.of();
        long resets = 0;
        if (source != null) {
            try {
                taskCounts = source.window();
                resets = source.takeResets();
            } catch (Throwable e) {
                problems.warn("counts", "scheduler-py monitor: reading Storm's task counters failed", e);
            }
        }
        long sentMessages = -1;
        if (source != null) {
            try {
                sentMessages = nettySent.window(source.nettySent());
            } catch (Throwable e) {
                problems.warn("netty-sent", "scheduler-py monitor: reading Storm's __send-iconnection-sent gauges "
                    + "failed; netty_sent_messages is left out", e);
            }
        }
        long writtenBytes = -1;
        try {
            writtenBytes = nettyWrites.window();
        } catch (Throwable e) {
            problems.warn(NettyWrites.PROBLEM, "scheduler-py monitor: reading the Netty client threads' I/O failed; "
                + "netty_written_bytes is left out", e);
        }
        boolean exact = hooked;
        WindowRecord.Counts ext = new WindowRecord.Counts(exact ? MonitorConfig.MODE_EXACT : MonitorConfig.MODE_COUNTS,
            statsSampleRate, loadAware, taskCounts, TopologyRoutes.of(view.topology(), view.workerComponents()),
            exact ? tupleBytes(t) : Map.of(), resets, sentMessages, writtenBytes);
        long end = System.currentTimeMillis();
        WindowRecord r = new WindowRecord(identity.topologyId, identity.supervisorId, identity.host, identity.port,
            seq++, windowStartMs, end, c.processCpuMs(), c.overheadCpuMs(), c.executors(), t, -1, ext);
        windowStartMs = end;
        logAttribution();
        String json = r.toJson();
        if (log != null) {
            try {
                log.append(json);
                problems.clear("log");
            } catch (Throwable e) {
                problems.warn("log", "scheduler-py monitor: cannot write " + log.file(), e);
            }
        }
        if (zk != null && !r.executors.isEmpty()) {
            // no executor thread running: the worker is starting or shutting down, nothing to attribute
            zk.offer(end, r.toJsonWithin(MonitorConfig.ZK_MAX_RECORD_BYTES));
        }
        Consumer<String> l = listener;
        if (l != null) {
            l.accept(json);
        }
        return r;
    }

    /** Mean serialized bytes per tuple by {@code "<source component>:<stream>"} from the hooks' sampled sizes. */
    private Map<String, Double> tupleBytes(List<TrafficCounters.Entry> traffic) {
        Map<String, long[]> sums = new TreeMap<>();
        for (TrafficCounters.Entry e : traffic) {
            String component = view.componentOf(e.src());
            if (component == null || e.tuples() <= 0 || e.bytes() <= 0 || !LiveCounters.isUserStream(e.stream())) {
                continue;
            }
            long[] s = sums.computeIfAbsent(component + ":" + e.stream(), k -> new long[2]);
            s[0] += e.bytes();
            s[1] += e.tuples();
        }
        Map<String, Double> out = new TreeMap<>();
        for (Map.Entry<String, long[]> e : sums.entrySet()) {
            out.put(e.getKey(), (double) e.getValue()[0] / e.getValue()[1]);
        }
        return out;
    }

    /** Log which threads count for which executor when it changes (from the 2nd window on, at most 5 times). */
    private void logAttribution() {
        String a = cpu.lastAttribution();
        if (seq >= 2 && attributionLogs < 5 && !a.equals(loggedAttribution)) {
            attributionLogs++;
            loggedAttribution = a;
            LOG.info("scheduler-py monitor: executor threads of {}: {}", identity.workerName(), a);
        } else if (LOG.isDebugEnabled()) {
            LOG.debug("scheduler-py monitor: executor threads of {}: {}", identity.workerName(), a);
        }
    }

    /** For tests: stop and forget every monitor of this JVM. */
    static void resetAll() {
        for (WorkerMonitor m : MONITORS.values()) {
            m.stop();
        }
        MONITORS.clear();
        PIDS.clear();
        SHELL_BOLTS.clear();
    }
}
