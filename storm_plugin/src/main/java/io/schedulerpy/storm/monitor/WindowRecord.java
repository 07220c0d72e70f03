package io.schedulerpy.storm.monitor;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One window record of {@code docs/monitoring-format.md} §1, and its JSON encoding: version 2 when it
 * carries the counts-mode fields ({@link Counts}: mode, Storm's per-task counts, the routes), else
 * version 1. Field order follows the contract; executors are sorted by task range, task counts by
 * task, traffic by (src, dst, stream); CPU values are in ms with 3 decimals.
 */
final class WindowRecord {
    static final int VERSION = 1;
    static final int VERSION_COUNTS = 2;

    /**
     * The version-2 fields: {@code mode} ({@code counts}, or {@code exact} when the task hooks counted
     * the traffic of the window), Storm's {@code topology.stats.sample.rate}, whether load-aware
     * messaging is on, the tasks' counts, the routes, sampled tuple sizes per
     * {@code "<component>:<stream>"} (empty: none), the counters found reset in the window, and the
     * messages the worker's Netty clients sent ({@link NettySent}) and the bytes their threads wrote
     * ({@link NettyWrites}) in the window (-1: unknown, the field is left out).
     */
    record Counts(String mode, double sampleRate, boolean loadAware, List<TaskCounts> taskCounts,
                  List<TopologyRoutes.Route> routes, Map<String, Double> tupleBytes, long resetCounters,
                  long nettySentMessages, long nettyWrittenBytes) {
        Counts {
            List<TaskCounts> tc = new ArrayList<>(taskCounts == null ? List.of() : taskCounts);
            tc.sort(Comparator.comparingInt(TaskCounts::task));
            taskCounts = tc;
            routes = routes == null ? List.of() : routes;
            tupleBytes = tupleBytes == null ? Map.of() : new TreeMap<>(tupleBytes);
            nettySentMessages = Math.max(-1, nettySentMessages);
            nettyWrittenBytes = Math.max(-1, nettyWrittenBytes);
        }

        /** These fields without the Netty ones. */
        Counts(String mode, double sampleRate, boolean loadAware, List<TaskCounts> taskCounts,
               List<TopologyRoutes.Route> routes, Map<String, Double> tupleBytes, long resetCounters) {
            this(mode, sampleRate, loadAware, taskCounts, routes, tupleBytes, resetCounters, -1, -1);
        }

        /**
         * These fields with only the task counts of tasks in {@code executors}: the contract (§1.1) lists
         * counts of the record's executors only, and Storm's registry holds a worker's tasks before their
         * executor threads start and after they stop, so at start-up and shutdown it names tasks (the
         * system task -1 first) whose executors the CPU sampler no longer or not yet sees.
         */
        Counts coveredBy(List<ExecutorCpu> executors) {
            List<TaskCounts> kept = new ArrayList<>(taskCounts.size());
            for (TaskCounts t : taskCounts) {
                for (ExecutorCpu e : executors) {
                    if (e.executor().start() <= t.task() && t.task() <= e.executor().end()) {
                        kept.add(t);
                        break;
                    }
                }
            }
            return kept.size() == taskCounts.size() ? this
                : new Counts(mode, sampleRate, loadAware, kept, routes, tupleBytes, resetCounters, nettySentMessages,
                    nettyWrittenBytes);
        }
    }

    /** One executor's CPU in the window. */
    record ExecutorCpu(ExecutorKey executor, double threadCpuMs, double subprocessCpuMs, List<Long> subprocessPids) {
    }

    final String topologyId;
    final String supervisorId;
    final String host;
    final int port;
    final long seq;
    final long windowStartMs;
    final long windowEndMs;
    final double workerCpuMs;
    final double overheadCpuMs;
    final List<ExecutorCpu> executors;
    final List<TrafficCounters.Entry> traffic;
    /** Pairs left out to fit the znode size limit; -1 = not truncated (field omitted). */
    final int truncatedPairs;
    /** The version-2 fields, or null for a version-1 record. */
    final Counts counts;

    WindowRecord(String topologyId, String supervisorId, String host, int port, long seq, long windowStartMs,
                 long windowEndMs, double workerCpuMs, double overheadCpuMs, List<ExecutorCpu> executors,
                 List<TrafficCounters.Entry> traffic, int truncatedPairs) {
        this(topologyId, supervisorId, host, port, seq, windowStartMs, windowEndMs, workerCpuMs, overheadCpuMs,
            executors, traffic, truncatedPairs, null);
    }

    WindowRecord(String topologyId, String supervisorId, String host, int port, long seq, long windowStartMs,
                 long windowEndMs, double workerCpuMs, double overheadCpuMs, List<ExecutorCpu> executors,
                 List<TrafficCounters.Entry> traffic, int truncatedPairs, Counts counts) {
        this.counts = counts == null ? null : counts.coveredBy(executors);
        this.topologyId = topologyId;
        this.supervisorId = supervisorId;
        this.host = host;
        this.port = port;
        this.seq = seq;
        this.windowStartMs = windowStartMs;
        this.windowEndMs = windowEndMs;
        this.workerCpuMs = workerCpuMs;
        this.overheadCpuMs = overheadCpuMs;
        List<ExecutorCpu> ex = new ArrayList<>(executors);
        ex.sort(Comparator.comparing(ExecutorCpu::executor));
        this.executors = ex;
        List<TrafficCounters.Entry> tr = new ArrayList<>(traffic);
        tr.sort(TrafficCounters.Entry.ORDER);
        this.traffic = tr;
        this.truncatedPairs = truncatedPairs;
    }

    String toJson() {
        StringBuilder b = new StringBuilder(256 + 64 * traffic.size() + 128 * executors.size()
            + (counts == null ? 0 : 160 * (counts.taskCounts().size() + counts.routes().size())));
        b.append("{\"v\": ").append(counts == null ? VERSION : VERSION_COUNTS);
        b.append(", \"topology_id\": ");
        string(b, topologyId);
        b.append(", \"supervisor_id\": ");
        string(b, supervisorId);
        b.append(", \"host\": ");
        string(b, host);
        b.append(", \"port\": ").append(port);
        b.append(", \"seq\": ").append(seq);
        b.append(", \"window_start_ms\": ").append(windowStartMs);
        b.append(", \"window_end_ms\": ").append(windowEndMs);
        b.append(", \"worker_cpu_ms\": ").append(ms(workerCpuMs));
        b.append(", \"overhead_cpu_ms\": ").append(ms(overheadCpuMs));
        if (counts != null) {
            b.append(", \"mode\": ");
            string(b, counts.mode());
            b.append(", \"sample_rate\": ").append(rate(counts.sampleRate()));
            b.append(", \"load_aware_messaging\": ").append(counts.loadAware());
        }
        b.append(", \"executors\": [");
        for (int i = 0; i < executors.size(); i++) {
            ExecutorCpu e = executors.get(i);
            b.append(i == 0 ? "" : ", ");
            b.append("{\"task_start\": ").append(e.executor().start());
            b.append(", \"task_end\": ").append(e.executor().end());
            b.append(", \"component\": ");
            string(b, e.executor().component());
            b.append(", \"thread_cpu_ms\": ").append(ms(e.threadCpuMs()));
            b.append(", \"subprocess_cpu_ms\": ").append(ms(e.subprocessCpuMs()));
            b.append(", \"subprocess_pids\": [");
            List<Long> pids = e.subprocessPids() == null ? List.of() : e.subprocessPids();
            for (int j = 0; j < pids.size(); j++) {
                b.append(j == 0 ? "" : ", ").append(pids.get(j));
            }
            b.append("]}");
        }
        b.append(']');
        if (counts != null) {
            appendCounts(b, counts);
        }
        b.append(", \"traffic\": [");
        for (int i = 0; i < traffic.size(); i++) {
            TrafficCounters.Entry t = traffic.get(i);
            b.append(i == 0 ? "" : ", ");
            b.append("{\"src\": ").append(t.src());
            b.append(", \"dst\": ").append(t.dst());
            b.append(", \"stream\": ");
            string(b, t.stream());
            b.append(", \"tuples\": ").append(t.tuples());
            b.append(", \"bytes\": ").append(t.bytes());
            b.append('}');
        }
        b.append(']');
        if (truncatedPairs >= 0) {
            b.append(", \"truncated_pairs\": ").append(truncatedPairs);
        }
        b.append('}');
        return b.toString();
    }

    private static void appendCounts(StringBuilder b, Counts c) {
        b.append(", \"task_counts\": [");
        for (int i = 0; i < c.taskCounts().size(); i++) {
            b.append(i == 0 ? "" : ", ");
            c.taskCounts().get(i).appendJson(b);
        }
        b.append("], \"routes\": [");
        for (int i = 0; i < c.routes().size(); i++) {
            TopologyRoutes.Route r = c.routes().get(i);
            b.append(i == 0 ? "" : ", ");
            b.append("{\"component\": ");
            string(b, r.component());
            b.append(", \"stream\": ");
            string(b, r.stream());
            b.append(", \"target\": ");
            string(b, r.target());
            b.append(", \"grouping\": ");
            string(b, r.grouping());
            if (!r.fields().isEmpty()) {
                b.append(", \"fields\": [");
                for (int j = 0; j < r.fields().size(); j++) {
                    b.append(j == 0 ? "" : ", ");
                    string(b, r.fields().get(j));
                }
                b.append(']');
            }
            b.append('}');
        }
        b.append(']');
        if (!c.tupleBytes().isEmpty()) {
            b.append(", \"tuple_bytes\": {");
            int i = 0;
            for (Map.Entry<String, Double> e : c.tupleBytes().entrySet()) {
                b.append(i++ == 0 ? "" : ", ");
                string(b, e.getKey());
                b.append(": ").append(ms(e.getValue()));
            }
            b.append('}');
        }
        b.append(", \"reset_counters\": ").append(c.resetCounters());
        if (c.nettySentMessages() >= 0) {
            b.append(", \"netty_sent_messages\": ").append(c.nettySentMessages());
        }
        if (c.nettyWrittenBytes() >= 0) {
            b.append(", \"netty_written_bytes\": ").append(c.nettyWrittenBytes());
        }
    }

    /** A rate in (0, 1] as a plain decimal (up to 6 decimals). */
    static String rate(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v) || v < 0) {
            v = 0;
        }
        return BigDecimal.valueOf(v).setScale(6, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString()
            .replaceFirst("^(-?\\d+)$", "$1.0");
    }

    /**
     * The JSON of this record, or, if its UTF-8 encoding is over {@code maxBytes}, of a copy that
     * keeps only the top pairs by tuples and says how many were left out ({@code truncated_pairs}).
     */
    String toJsonWithin(int maxBytes) {
        String json = toJson();
        if (utf8Length(json) <= maxBytes || traffic.isEmpty()) {
            return json;
        }
        List<TrafficCounters.Entry> byTuples = new ArrayList<>(traffic);
        byTuples.sort(Comparator.comparingLong(TrafficCounters.Entry::tuples).reversed()
            .thenComparing(TrafficCounters.Entry.ORDER));
        int keep = traffic.size();
        while (keep > 0) {
            int bytes = utf8Length(json);
            // shrink proportionally to the excess (with 5% slack), at least by one pair
            double perPair = (double) bytes / Math.max(1, keep);
            int drop = (int) Math.ceil((bytes - maxBytes) / perPair * 1.05);
            keep = Math.max(0, keep - Math.max(1, drop));
            WindowRecord cut = new WindowRecord(topologyId, supervisorId, host, port, seq, windowStartMs, windowEndMs,
                workerCpuMs, overheadCpuMs, executors, byTuples.subList(0, keep), traffic.size() - keep, counts);
            json = cut.toJson();
            if (utf8Length(json) <= maxBytes) {
                return json;
            }
        }
        return json;
    }

    static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    /** A non-negative ms value with at most 3 decimals, never in exponent form. */
    static String ms(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v) || v < 0) {
            v = 0;
        }
        return BigDecimal.valueOf(v).setScale(3, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString()
            .replaceFirst("^(-?\\d+)$", "$1.0");
    }

    static void string(StringBuilder b, String s) {
        if (s == null) {
            b.append("null");
            return;
        }
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
