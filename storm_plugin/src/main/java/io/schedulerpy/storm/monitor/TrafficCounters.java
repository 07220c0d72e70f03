package io.schedulerpy.storm.monitor;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * Logical traffic of one worker: tuples per (source task, destination task, stream), counted at
 * emit time, plus sampled serialized sizes per (source task, stream).
 *
 * <p>The hot path ({@link StreamTraffic#count}) does two hash lookups and a {@link LongAdder}
 * increment per destination task; each source task has its own maps (a task's emits come from its
 * executor thread, or from a ShellBolt's reader thread), so writers hardly ever contend.
 * {@link #drain()} runs on the monitor thread and uses {@link LongAdder#sumThenReset()}, which
 * swaps every cell atomically: an increment racing with the drain lands in this window or the next,
 * never nowhere.
 */
final class TrafficCounters {

    /** One (src, dst, stream) row of a window. */
    record Entry(int src, int dst, String stream, long tuples, long bytes) {
        static final Comparator<Entry> ORDER = Comparator.comparingInt(Entry::src).thenComparingInt(Entry::dst)
            .thenComparing(Entry::stream);
    }

    private final ConcurrentHashMap<Integer, TaskTraffic> bySource = new ConcurrentHashMap<>();

    TaskTraffic forTask(int task) {
        TaskTraffic t = bySource.get(task);
        return t != null ? t : bySource.computeIfAbsent(task, TaskTraffic::new);
    }

    /** The window's rows (sorted by src, dst, stream; rows with no tuples left out); resets the counts. */
    List<Entry> drain() {
        List<Entry> out = new ArrayList<>();
        for (TaskTraffic t : bySource.values()) {
            for (Map.Entry<String, StreamTraffic> s : t.streams.entrySet()) {
                StreamTraffic st = s.getValue();
                double avg = st.drainAverageSize();
                for (Map.Entry<Integer, LongAdder> d : st.dst.entrySet()) {
                    long n = d.getValue().sumThenReset();
                    if (n > 0) {
                        out.add(new Entry(t.task, d.getKey(), s.getKey(), n, Math.round(n * avg)));
                    }
                }
            }
        }
        out.sort(Entry.ORDER);
        return out;
    }

    /** Everything one source task emits. */
    static final class TaskTraffic {
        final int task;
        private final ConcurrentHashMap<String, StreamTraffic> streams = new ConcurrentHashMap<>();

        TaskTraffic(int task) {
            this.task = task;
        }

        StreamTraffic stream(String stream) {
            String key = stream == null ? "default" : stream;
            StreamTraffic s = streams.get(key);
            return s != null ? s : streams.computeIfAbsent(key, k -> new StreamTraffic());
        }
    }

    /** One (source task, stream): tuples per destination task and the sampled tuple sizes. */
    static final class StreamTraffic {
        private final ConcurrentHashMap<Integer, LongAdder> dst = new ConcurrentHashMap<>();
        private final LongAdder sampledBytes = new LongAdder();
        private final LongAdder samples = new LongAdder();
        /** Average size of the last window that had samples; -1 before the first sample. */
        private volatile double lastAverage = -1;
        private volatile boolean everSampled;

        /** Count one emitted tuple for each destination task (null destinations are skipped). */
        int count(Collection<Integer> outTasks) {
            int n = 0;
            if (outTasks == null) {
                return 0;
            }
            for (Integer d : outTasks) {
                if (d == null) {
                    continue;               // emitDirect to a task that does not subscribe
                }
                LongAdder a = dst.get(d);
                if (a == null) {
                    a = dst.computeIfAbsent(d, k -> new LongAdder());
                }
                a.increment();
                n++;
            }
            return n;
        }

        /** Whether to measure this emit's size: always the first one, then with probability {@code rate}. */
        boolean shouldSample(double rate) {
            return !everSampled || (rate > 0 && (rate >= 1 || ThreadLocalRandom.current().nextDouble() < rate));
        }

        void addSample(long bytes) {
            if (bytes < 0) {
                return;
            }
            sampledBytes.add(bytes);
            samples.increment();
            everSampled = true;
        }

        /** Average sampled size in this window (or the last known one), then reset. */
        double drainAverageSize() {
            long n = samples.sumThenReset();
            long b = sampledBytes.sumThenReset();
            if (n > 0) {
                lastAverage = (double) b / n;
            }
            return Math.max(lastAverage, 0);
        }
    }
}
