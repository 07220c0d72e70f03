package io.schedulerpy.storm.monitor;

import com.codahale.metrics.MetricRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.storm.Config;
import org.apache.storm.daemon.supervisor.AdvancedFSOps;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.metrics2.MetricRegistryProvider;
import org.apache.storm.metrics2.StormMetricRegistry;
import org.apache.storm.metrics2.reporters.StormReporter;
import org.apache.storm.utils.ConfigUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler-py worker monitor in counts mode (the default): a Storm metrics reporter with no
 * per-tuple cost. Enable it for every topology in storm.yaml:
 *
 * <pre>
 * topology.metrics.reporters:
 *   - class: "io.schedulerpy.storm.monitor.CountsReporter"
 * </pre>
 *
 * <p>Every worker starts its reporters from {@code StormMetricRegistry.start} (storm-client
 * {@code daemon/worker/Worker.java}, before its executors exist) with the worker's metrics registry
 * and topology conf. This reporter then waits (polling once a second) until Storm has registered
 * the metrics of the worker's tasks (their receive queues' gauges, made with the worker's state),
 * reads the user topology from the supervisor's copy ({@code stormcode.ser}, for the routes and the
 * multilang components), and starts or joins the worker's {@link WorkerMonitor} with a
 * {@link CountsSource}: the window records, CPU sampling, ZooKeeper publishing and live counters are
 * the same as with the hooks. After that it polls Storm's execute-latency gauges once a second.
 *
 * <p>With {@code scheduler.monitor.mode: exact} (topology or cluster conf) it also adds
 * {@link TrafficHook} to the topology's {@code topology.auto.task.hooks} before the worker builds
 * its tasks, so one key turns on the exact mode (the hook's per-tuple cost included).
 */
public class CountsReporter implements StormReporter {
    private static final Logger LOG = LoggerFactory.getLogger(CountsReporter.class);
    static final long POLL_MS = 1000;
    static final String HOOK = TrafficHook.class.getName();

    private final OnceLog problems = new OnceLog(LOG);
    private Map<String, Object> topoConf;
    private StormMetricRegistry registry;
    private ScheduledExecutorService timer;
    private CountsSource source;
    private volatile WorkerMonitor monitor;
    private Map<Integer, String> lastTasks;

    @Override
    public void prepare(MetricRegistryProvider provider, Map<String, Object> topoConf, Map<String, Object> reporterConf) {
        this.topoConf = topoConf;
        if (provider instanceof StormMetricRegistry) {
            this.registry = (StormMetricRegistry) provider;
        } else {
            problems.warn("registry", "scheduler-py monitor: the metrics registry is a "
                + (provider == null ? "null" : provider.getClass().getName()) + ", not Storm's StormMetricRegistry; "
                + "the counts-mode monitor is off", null);
        }
        if (new MonitorConfig(topoConf).exact) {
            addHook(topoConf);
        }
    }

    @Override
    @Deprecated
    public void prepare(MetricRegistry metricsRegistry, Map<String, Object> topoConf, Map<String, Object> reporterConf) {
        problems.warn("registry", "scheduler-py monitor: started without Storm's StormMetricRegistry (an old "
            + "Storm?); the counts-mode monitor is off", null);
    }

    /** Put {@link TrafficHook} into {@code topology.auto.task.hooks} (the worker reads it when it builds its tasks). */
    static boolean addHook(Map<String, Object> conf) {
        try {
            Object hooks = conf.get(Config.TOPOLOGY_AUTO_TASK_HOOKS);
            List<Object> list = new ArrayList<>();
            if (hooks instanceof List) {
                list.addAll((List<?>) hooks);
            }
            if (!list.contains(HOOK)) {
                list.add(HOOK);
                conf.put(Config.TOPOLOGY_AUTO_TASK_HOOKS, list);
                LOG.info("scheduler-py monitor: {}={}: added {} to {}", MonitorConfig.MODE, MonitorConfig.MODE_EXACT,
                    HOOK, Config.TOPOLOGY_AUTO_TASK_HOOKS);
            }
            return true;
        } catch (RuntimeException e) {
            LOG.warn("scheduler-py monitor: {}={} but the worker's conf cannot be changed ({}); add \"{}\" to {} "
                + "yourself", MonitorConfig.MODE, MonitorConfig.MODE_EXACT, OnceLog.describe(e), HOOK,
                Config.TOPOLOGY_AUTO_TASK_HOOKS);
            return false;
        }
    }

    @Override
    public void start() {
        if (registry == null) {
            return;
        }
        source = new CountsSource(new StormCounters(registry));
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "scheduler-py-monitor-counts");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::tick, POLL_MS, POLL_MS, TimeUnit.MILLISECONDS);
    }

    private void tick() {
        try {
            if (monitor == null) {
                attach();
            } else {
                source.poll();
            }
        } catch (Throwable t) {
            problems.warn("tick", "scheduler-py monitor: reading Storm's counters failed", t);
        }
    }

    /** Start (or join) the worker's monitor once Storm's task metrics are there and stable for a poll. */
    private void attach() {
        Map<Integer, String> tasks = source.tasks();
        boolean stable = !tasks.isEmpty() && tasks.equals(lastTasks);
        lastTasks = tasks;
        if (!stable) {
            return;
        }
        String topologyId = topologyId(topoConf);
        int port = new StormCounters(registry).port();
        if (port <= 0) {
            port = intProperty("worker.port");
        }
        if (topologyId == null || port <= 0) {
            problems.warn("identity", "scheduler-py monitor: cannot tell this worker's topology id (" + topologyId
                + ") or port (" + port + "); the counts-mode monitor waits", null);
            return;
        }
        StormTopology topology = readTopology(topologyId);
        WorkerMonitor m = WorkerMonitor.acquireCounts(topoConf, topologyId, port, WorkerView.of(tasks, topology), source);
        monitor = m;
        LOG.info("scheduler-py monitor: counts mode on for {}:{} ({} tasks; queues read {}){}", topologyId, port,
            tasks.size(), source.queuesExact() ? "exactly" : "from the gauges only (live counters sampled)",
            topology == null ? "; user topology unknown, no routes" : "");
    }

    /**
     * The supervisor's copy of the user topology. The worker's topology conf carries Nimbus's
     * {@code storm.local.dir}; the supervisor passes its own as {@code -Dstorm.local.dir}
     * (storm-server {@code BasicContainer}), which is where {@code stormdist/<id>/stormcode.ser} is.
     */
    private StormTopology readTopology(String topologyId) {
        try {
            Map<String, Object> conf = new HashMap<>(topoConf);
            String localDir = System.getProperty(Config.STORM_LOCAL_DIR);
            if (localDir != null && !localDir.isBlank()) {
                conf.put(Config.STORM_LOCAL_DIR, localDir);
            }
            return ConfigUtils.readSupervisorTopology(conf, topologyId, AdvancedFSOps.make(conf));
        } catch (Throwable t) {
            problems.warn("topology", "scheduler-py monitor: cannot read the topology of " + topologyId
                + " from the supervisor's copy; records carry no routes", t);
            return null;
        }
    }

    static String topologyId(Map<String, Object> conf) {
        Object id = conf == null ? null : conf.get(Config.STORM_ID);
        if (id != null && !id.toString().isBlank()) {
            return id.toString();
        }
        String p = System.getProperty("storm.id");
        return p == null || p.isBlank() ? null : p;
    }

    private static int intProperty(String name) {
        try {
            return Integer.parseInt(System.getProperty(name, "-1").trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    @Override
    public void close() {
        stop();
    }

    @Override
    public void stop() {
        ScheduledExecutorService t = timer;
        if (t != null) {
            t.shutdownNow();
        }
        WorkerMonitor m = monitor;
        monitor = null;
        if (m != null) {
            try {
                m.release();
            } catch (Throwable e) {
                // never hurt the worker's shutdown
            }
        }
    }
}
