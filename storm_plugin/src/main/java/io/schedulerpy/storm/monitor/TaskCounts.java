package io.schedulerpy.storm.monitor;

import java.util.Map;
import java.util.TreeMap;

/**
 * One task's counts in one window ({@code docs/monitoring-format.md} §1, {@code task_counts}): Storm's
 * sampled estimates of tuples emitted and transferred per output stream, executed per
 * {@code "<source component>:<stream>"}, acked and failed (keys as Storm names them: a spout's by
 * stream, a bolt's by source component and stream), and the mean execute latency (ms) per input.
 */
record TaskCounts(int task, String component, Map<String, Long> emitted, Map<String, Long> transferred,
                  Map<String, Long> executed, Map<String, Double> executeMs, Map<String, Long> acked,
                  Map<String, Long> failed) {

    TaskCounts {
        emitted = sorted(emitted);
        transferred = sorted(transferred);
        executed = sorted(executed);
        executeMs = sorted(executeMs);
        acked = sorted(acked);
        failed = sorted(failed);
    }

    private static <V> Map<String, V> sorted(Map<String, V> m) {
        return m == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(m));
    }

    /**
     * Split one task's counter deltas ({@link StormCounters} names → tuples) into the record's maps,
     * with the execute latencies ({@code "<component>:<stream>"} → ms) of the window.
     */
    static TaskCounts of(int task, String component, Map<String, Long> deltas, Map<String, Double> executeMs) {
        Map<String, Long> emitted = new TreeMap<>();
        Map<String, Long> transferred = new TreeMap<>();
        Map<String, Long> executed = new TreeMap<>();
        Map<String, Long> acked = new TreeMap<>();
        Map<String, Long> failed = new TreeMap<>();
        for (Map.Entry<String, Long> e : deltas.entrySet()) {
            String name = e.getKey();
            long n = e.getValue();
            if (name.startsWith(StormCounters.EMIT)) {
                emitted.merge(name.substring(StormCounters.EMIT.length()), n, Long::sum);
            } else if (name.startsWith(StormCounters.TRANSFER)) {
                transferred.merge(name.substring(StormCounters.TRANSFER.length()), n, Long::sum);
            } else if (name.startsWith(StormCounters.EXECUTE)) {
                executed.merge(name.substring(StormCounters.EXECUTE.length()), n, Long::sum);
            } else if (name.startsWith(StormCounters.ACK)) {
                acked.merge(name.substring(StormCounters.ACK.length()), n, Long::sum);
            } else if (name.startsWith(StormCounters.FAIL)) {
                failed.merge(name.substring(StormCounters.FAIL.length()), n, Long::sum);
            }
        }
        return new TaskCounts(task, component, emitted, transferred, executed, executeMs, acked, failed);
    }

    void appendJson(StringBuilder b) {
        b.append("{\"task\": ").append(task);
        b.append(", \"component\": ");
        WindowRecord.string(b, component);
        longs(b, "emitted", emitted);
        longs(b, "transferred", transferred);
        longs(b, "executed", executed);
        if (!executeMs.isEmpty()) {
            b.append(", \"execute_ms\": {");
            int i = 0;
            for (Map.Entry<String, Double> e : executeMs.entrySet()) {
                b.append(i++ == 0 ? "" : ", ");
                WindowRecord.string(b, e.getKey());
                b.append(": ").append(WindowRecord.ms(e.getValue()));
            }
            b.append('}');
        }
        longs(b, "acked", acked);
        longs(b, "failed", failed);
        b.append('}');
    }

    private static void longs(StringBuilder b, String name, Map<String, Long> m) {
        b.append(", \"").append(name).append("\": {");
        int i = 0;
        for (Map.Entry<String, Long> e : m.entrySet()) {
            b.append(i++ == 0 ? "" : ", ");
            WindowRecord.string(b, e.getKey());
            b.append(": ").append(e.getValue());
        }
        b.append('}');
    }
}
