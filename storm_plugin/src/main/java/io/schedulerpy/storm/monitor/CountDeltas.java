package io.schedulerpy.storm.monitor;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Turns cumulative counters into per-window deltas. Storm's task counters
 * ({@code StormMetricRegistry}, fed by {@code TaskMetrics}) only grow while the worker lives; a
 * counter that goes backwards was reset (its task or its worker's registry started again): its
 * delta is dropped for that window, counted in {@link #resets()}, and its new value becomes the
 * baseline. A counter first seen after the baseline was taken counts from 0 (Storm creates a task's
 * counters on its first sampled event). Single-threaded (the monitor's window thread).
 */
final class CountDeltas {
    private final Map<String, Long> last = new HashMap<>();
    private long resets;
    private boolean baselined;

    /** Remember {@code values} (key → cumulative count) as the starting point without reporting them. */
    void baseline(Map<String, Long> values) {
        last.clear();
        last.putAll(values);
        baselined = true;
    }

    /**
     * The growth of every counter since the previous call (or the baseline): key → delta, only keys
     * with a positive delta. Keys missing from {@code values} are forgotten.
     */
    Map<String, Long> deltas(Map<String, Long> values) {
        Map<String, Long> out = new HashMap<>();
        Set<String> seen = new HashSet<>();
        for (Map.Entry<String, Long> e : values.entrySet()) {
            String key = e.getKey();
            long now = e.getValue() == null ? 0 : e.getValue();
            seen.add(key);
            Long before = last.put(key, now);
            long d;
            if (before == null) {
                d = baselined ? now : 0;
                if (!baselined) {
                    continue;
                }
            } else {
                d = now - before;
            }
            if (d < 0) {
                resets++;
                continue;
            }
            if (d > 0) {
                out.put(key, d);
            }
        }
        last.keySet().retainAll(seen);
        baselined = true;
        return out;
    }

    /** Counters found to have gone backwards so far (cumulative). */
    long resets() {
        return resets;
    }
}
