package io.schedulerpy.storm.monitor;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.metrics2.StormMetricRegistry;
import org.apache.storm.metrics2.TaskMetricDimensions;
import org.apache.storm.shade.org.jctools.queues.QueueProgressIndicators;

/**
 * Reads what Storm itself counts per task of this worker from the worker's
 * {@link StormMetricRegistry} (storm-client {@code metrics2/TaskMetrics.java}): the counters
 * {@code __emit-count-<stream>}, {@code __transfer-count-<stream>},
 * {@code __execute-count-<component>:<stream>}, {@code __ack-count-…}, {@code __fail-count-…}
 * (incremented by {@code 1/topology.stats.sample.rate} for each sampled event, so they estimate
 * the true counts), the execute-latency gauges ({@code __execute-latency-<component>:<stream>},
 * the mean of the last 3 sampled executes, whole ms), and the executors' queues through
 * {@link QueueProbe}. Called from the monitor's threads only; reading a counter is a volatile
 * read in Storm's {@code LongAdder}, nothing a tuple waits for.
 */
final class StormCounters {
    static final String EMIT = "__emit-count-";
    static final String TRANSFER = "__transfer-count-";
    static final String EXECUTE = "__execute-count-";
    static final String ACK = "__ack-count-";
    static final String FAIL = "__fail-count-";
    static final String EXECUTE_LATENCY = "__execute-latency-";
    static final String[] COUNTERS = {EMIT, TRANSFER, EXECUTE, ACK, FAIL};
    static final String RECEIVE_QUEUE = "receive-queue-";
    static final String TRANSFER_QUEUE = "worker-transfer-queue-";
    static final String NETTY_SENT = "__send-iconnection-sent-";
    static final String NETTY_PENDING = "__send-iconnection-pending-";
    /** Storm's system task of every worker ({@code Constants.SYSTEM_TASK_ID}). */
    static final int SYSTEM_TASK = -1;

    /** A task's queue state now: tuples waiting, and tuples that ever left its executor's queues (exact when {@code exact}). */
    record Queues(long waiting, long passed, boolean exact) {
    }

    private final StormMetricRegistry registry;
    private final QueueProbe probe = new QueueProbe();

    StormCounters(StormMetricRegistry registry) {
        this.registry = registry;
    }

    /** Task → component of every task Storm registered metrics for in this worker (its executors' tasks, -1 included). */
    Map<Integer, String> tasks() {
        Map<Integer, String> out = new TreeMap<>();
        for (TaskMetricDimensions d : registry.getTaskMetrics().keySet()) {
            Map<String, String> dims = d.getDimensions();
            String id = dims.get("taskid");
            if (id == null) {
                continue;
            }
            try {
                int task = Integer.parseInt(id);
                String c = dims.get("componentId");
                if (c != null || !out.containsKey(task)) {
                    out.put(task, c == null ? "" : c);
                }
            } catch (NumberFormatException e) {
                // not a task
            }
        }
        return out;
    }

    /** The worker port Storm's registry was started with (its metrics' {@code port} dimension), or -1 before any. */
    int port() {
        for (TaskMetricDimensions d : registry.getTaskMetrics().keySet()) {
            String p = d.getDimensions().get("port");
            if (p != null) {
                try {
                    int port = Integer.parseInt(p);
                    if (port > 0) {
                        return port;
                    }
                } catch (NumberFormatException e) {
                    // look at the next one
                }
            }
        }
        return -1;
    }

    /** The cumulative counters of {@code task} ({@code TaskMetrics} names → count). */
    Map<String, Long> counters(int task) {
        Map<String, Long> out = new HashMap<>();
        for (Map.Entry<String, Counter> e : registry.getTaskCounters(task).entrySet()) {
            if (isTaskCounter(e.getKey())) {
                out.put(e.getKey(), e.getValue().getCount());
            }
        }
        return out;
    }

    static boolean isTaskCounter(String name) {
        for (String p : COUNTERS) {
            if (name.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    /** The execute-latency gauges of {@code task}: {@code "<component>:<stream>"} → ms. */
    Map<String, Double> executeLatencies(int task) {
        Map<String, Double> out = new HashMap<>();
        for (Map.Entry<String, Gauge> e : registry.getTaskGauges(task).entrySet()) {
            if (e.getKey().startsWith(EXECUTE_LATENCY)) {
                Object v = e.getValue().getValue();
                if (v instanceof Number && Double.isFinite(((Number) v).doubleValue())) {
                    out.put(e.getKey().substring(EXECUTE_LATENCY.length()), ((Number) v).doubleValue());
                }
            }
        }
        return out;
    }

    /**
     * The queues of every task's executor; for the system task -1 also the worker's transfer queue
     * and its Netty clients ({@code __send-iconnection-pending/sent-*}). Tasks of one executor share
     * its queue (Storm registers the same gauges under each): it counts for the lowest of them.
     */
    Map<Integer, Queues> queues(Iterable<Integer> tasks) {
        Map<Integer, Queues> out = new TreeMap<>();
        Map<QueueProgressIndicators, Boolean> counted = new IdentityHashMap<>();
        for (int task : tasks) {
            long waiting = 0;
            long passed = 0;
            boolean exact = true;
            boolean any = false;
            for (Map.Entry<String, Gauge> e : registry.getTaskGauges(task).entrySet()) {
                String name = e.getKey();
                boolean queue = name.startsWith(RECEIVE_QUEUE) || task == SYSTEM_TASK && name.startsWith(TRANSFER_QUEUE);
                if (queue && (name.endsWith("-population") || name.endsWith("-overflow"))) {
                    any = true;
                    QueueProgressIndicators q = probe.queueOf(e.getValue());
                    if (q == null) {
                        exact = false;
                        waiting += asLong(e.getValue());
                    } else if (counted.put(q, Boolean.TRUE) == null) {
                        waiting += QueueProbe.size(q);
                        passed += q.currentConsumerIndex();
                    }
                } else if (task == SYSTEM_TASK && name.startsWith(NETTY_PENDING)) {
                    waiting += asLong(e.getValue());
                } else if (task == SYSTEM_TASK && name.startsWith(NETTY_SENT)) {
                    passed += asLong(e.getValue());
                }
            }
            out.put(task, new Queues(waiting, passed, any && exact));
        }
        return out;
    }

    /**
     * The worker's {@code __send-iconnection-sent-<host>:<port>} gauges now (storm-client
     * {@code messaging/netty/Client.java}: messages each Netty client wrote to a remote worker, registered
     * under the system task -1), by {@code <host>:<port>}. Unreadable or negative values are left out.
     */
    Map<String, NettySent.Reading> nettySent() {
        Map<String, NettySent.Reading> out = new TreeMap<>();
        for (Map.Entry<String, Gauge> e : registry.getTaskGauges(SYSTEM_TASK).entrySet()) {
            if (e.getKey().startsWith(NETTY_SENT)) {
                NettySent.Reading r = NettySent.Reading.of(e.getValue());
                if (r != null) {
                    out.put(e.getKey().substring(NETTY_SENT.length()), r);
                }
            }
        }
        return out;
    }

    private static long asLong(Gauge<?> g) {
        try {
            Object v = g.getValue();
            return v instanceof Number ? Math.max(0, Math.round(((Number) v).doubleValue())) : 0;
        } catch (RuntimeException e) {
            return 0;
        }
    }
}
