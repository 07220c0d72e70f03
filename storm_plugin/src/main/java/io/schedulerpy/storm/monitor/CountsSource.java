package io.schedulerpy.storm.monitor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The counts mode's source of a worker: Storm's own per-task counters ({@link StormCounters}) turned
 * into window deltas ({@link CountDeltas}) with tuple-weighted execute latencies, and the live
 * counters a drain watches. Threads: the reporter's timer calls {@link #poll}, the window loop
 * {@link #window}, the live publisher {@link #live}; all synchronized (each is a few map reads per task).
 *
 * <p><b>Execute latency.</b> Storm keeps per input only the mean of the last 3 sampled executes
 * (whole ms). {@link #poll} (about once a second) weights the gauge's value by the sampled executes
 * since the previous poll; a window's {@code execute_ms} is that weighted mean, absent when the
 * task executed nothing sampled from that input.
 *
 * <p><b>Live counters.</b> {@code emitted}, {@code acked}, {@code failed} and {@code ack_init} are
 * Storm's sampled estimates; {@code executed} is exact when the queues could be read
 * ({@link QueueProbe}): every tuple the task's executor took from its queues (data, acks, ticks;
 * counted on its lowest task; the system task -1 adds the transfer queue and the messages its Netty
 * clients sent), and {@code pending} is the tuples waiting in those queues right now. A drain
 * (no {@code pending}, nothing moved between two publications) is so seen exactly at the queues.
 */
final class CountsSource {
    private final StormCounters counters;
    private final CountDeltas deltas = new CountDeltas();
    private final Map<String, double[]> latency = new HashMap<>();          // "task|input" → {Σ ms·n, Σ n}
    private final Map<String, Long> lastExecuted = new HashMap<>();         // "task|input" → cumulative sampled executes
    private long resetsBefore;

    CountsSource(StormCounters counters) {
        this.counters = counters;
        deltas.baseline(Map.of());
    }

    Map<Integer, String> tasks() {
        return counters.tasks();
    }

    /** Weigh each input's current execute latency by the executes sampled since the last poll. */
    synchronized void poll() {
        for (int task : counters.tasks().keySet()) {
            Map<String, Long> c = counters.counters(task);
            Map<String, Double> lat = counters.executeLatencies(task);
            for (Map.Entry<String, Double> e : lat.entrySet()) {
                String key = task + "|" + e.getKey();
                Long now = c.get(StormCounters.EXECUTE + e.getKey());
                if (now == null) {
                    continue;
                }
                Long before = lastExecuted.put(key, now);
                long n = before == null ? now : now - before;
                if (n > 0) {
                    double[] acc = latency.computeIfAbsent(key, k -> new double[2]);
                    acc[0] += e.getValue() * n;
                    acc[1] += n;
                }
            }
        }
    }

    /** The window's counts of every task of the worker (system tasks included), then reset. */
    synchronized List<TaskCounts> window() {
        poll();
        Map<Integer, String> tasks = counters.tasks();
        Map<String, Long> all = new HashMap<>();
        for (int task : tasks.keySet()) {
            for (Map.Entry<String, Long> e : counters.counters(task).entrySet()) {
                all.put(task + "|" + e.getKey(), e.getValue());
            }
        }
        Map<Integer, Map<String, Long>> byTask = new TreeMap<>();
        for (Map.Entry<String, Long> e : deltas.deltas(all).entrySet()) {
            int bar = e.getKey().indexOf('|');
            int task = Integer.parseInt(e.getKey().substring(0, bar));
            byTask.computeIfAbsent(task, k -> new HashMap<>()).put(e.getKey().substring(bar + 1), e.getValue());
        }
        Map<Integer, Map<String, Double>> ms = new HashMap<>();
        for (Map.Entry<String, double[]> e : latency.entrySet()) {
            if (e.getValue()[1] > 0) {
                int bar = e.getKey().indexOf('|');
                ms.computeIfAbsent(Integer.parseInt(e.getKey().substring(0, bar)), k -> new HashMap<>())
                    .put(e.getKey().substring(bar + 1), e.getValue()[0] / e.getValue()[1]);
            }
        }
        latency.clear();
        List<TaskCounts> out = new ArrayList<>();
        for (Map.Entry<Integer, String> t : tasks.entrySet()) {
            out.add(TaskCounts.of(t.getKey(), t.getValue(), byTask.getOrDefault(t.getKey(), Map.of()),
                ms.getOrDefault(t.getKey(), Map.of())));
        }
        return out;
    }

    /** Counters found reset since the previous call. */
    synchronized long takeResets() {
        long now = deltas.resets();
        long d = now - resetsBefore;
        resetsBefore = now;
        return d;
    }

    /** The live counters now (§5 of the format, counts mode), one per task, by task id. */
    synchronized List<LiveCounters.Snapshot> live(WorkerView view) {
        Map<Integer, String> tasks = counters.tasks();
        Map<Integer, StormCounters.Queues> queues = counters.queues(tasks.keySet());
        List<LiveCounters.Snapshot> out = new ArrayList<>(tasks.size());
        for (Map.Entry<Integer, String> t : tasks.entrySet()) {
            long emitted = 0;
            long executedSampled = 0;
            long acked = 0;
            long failed = 0;
            long ackInit = 0;
            for (Map.Entry<String, Long> e : counters.counters(t.getKey()).entrySet()) {
                String name = e.getKey();
                long v = e.getValue();
                if (name.startsWith(StormCounters.EMIT)) {
                    String stream = name.substring(StormCounters.EMIT.length());
                    if (LiveCounters.isUserStream(stream)) {
                        emitted += v;
                    } else if (LiveCounters.ACK_INIT_STREAM.equals(stream)) {
                        ackInit += v;
                    }
                } else if (name.startsWith(StormCounters.EXECUTE)) {
                    executedSampled += v;
                } else if (name.startsWith(StormCounters.ACK)) {
                    acked += v;
                } else if (name.startsWith(StormCounters.FAIL)) {
                    failed += v;
                }
            }
            StormCounters.Queues q = queues.get(t.getKey());
            boolean exact = q != null && q.exact();
            long executed = exact ? q.passed() : executedSampled;
            long pending = q == null ? 0 : q.waiting();
            out.add(new LiveCounters.Snapshot(t.getKey(), t.getValue(), view != null && view.isSpout(t.getValue()),
                emitted, executed, acked, failed, ackInit, pending));
        }
        return out;
    }

    /** The worker's Netty clients' {@code __send-iconnection-sent-*} gauges now, by {@code <host>:<port>}. */
    synchronized Map<String, NettySent.Reading> nettySent() {
        return counters.nettySent();
    }

    /** Whether the queues of every task could be read exactly (for the monitor's start-up log). */
    synchronized boolean queuesExact() {
        Map<Integer, String> tasks = counters.tasks();
        for (StormCounters.Queues q : counters.queues(tasks.keySet()).values()) {
            if (!q.exact()) {
                return false;
            }
        }
        return !tasks.isEmpty();
    }
}
