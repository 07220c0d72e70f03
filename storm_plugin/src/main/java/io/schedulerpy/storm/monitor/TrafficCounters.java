package io.schedulerpy.storm.monitor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Logical traffic of one worker: tuples per (source task, destination task, stream), counted at
 * emit time, plus sampled serialized sizes per (source task, stream).
 *
 * <p>The hot path ({@link StreamTraffic#count}) allocates nothing and takes no lock: per destination
 * task it reads one slot of an array indexed by the task id and increments the {@link LongAdder}
 * there (the slot is created once, on the task's first tuple, on a slow path that copies the array).
 * Each source task has its own arrays (a task's emits come from its executor thread, or from a
 * ShellBolt's reader thread), so writers hardly ever contend. Sizes are sampled every
 * {@code 1/rate}-th emit of a stream (a countdown, not a random draw). {@link #drain()} runs on the
 * monitor thread and uses {@link LongAdder#sumThenReset()}, which swaps every cell atomically: an
 * increment racing with the drain lands in this window or the next, never nowhere.
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
                String stream = s.getKey();
                st.drainTuples((dst, n) -> out.add(new Entry(t.task, dst, stream, n, Math.round(n * avg))));
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
        /** Storm's task ids are small positive integers; larger (or negative) ones go to {@link #others}. */
        static final int MAX_DENSE_TASK = 1 << 16;

        /** Counter per destination task id; replaced (copy on write) only when a slot is added. */
        private volatile LongAdder[] byTask = new LongAdder[0];
        private final ConcurrentHashMap<Integer, LongAdder> others = new ConcurrentHashMap<>();
        private final LongAdder sampledBytes = new LongAdder();
        private final LongAdder samples = new LongAdder();
        /** Average size of the last window that had samples; -1 before the first sample. */
        private volatile double lastAverage = -1;
        private volatile boolean everSampled;
        /** Emits left until the next size sample (racy by design: it only spaces the samples). */
        private int untilSample = 1;

        /** Count one emitted tuple for each destination task (null destinations are skipped). */
        int count(Collection<Integer> outTasks) {
            if (outTasks == null) {
                return 0;
            }
            int n = 0;
            for (Integer d : outTasks) {
                if (d == null) {
                    continue;               // emitDirect to a task that does not subscribe
                }
                int task = d;
                LongAdder[] slots = byTask;
                LongAdder a = task >= 0 && task < slots.length ? slots[task] : null;
                if (a == null) {
                    a = slot(task);
                }
                a.increment();
                n++;
            }
            return n;
        }

        /** The slow path: the counter of a destination task seen for the first time. */
        private synchronized LongAdder slot(int task) {
            if (task < 0 || task >= MAX_DENSE_TASK) {
                return others.computeIfAbsent(task, k -> new LongAdder());
            }
            LongAdder[] slots = byTask;
            if (task < slots.length && slots[task] != null) {
                return slots[task];
            }
            LongAdder[] grown = Arrays.copyOf(slots, Math.max(slots.length, Math.min(MAX_DENSE_TASK,
                Integer.highestOneBit(task) * 2)));
            grown[task] = new LongAdder();
            byTask = grown;                 // volatile write: the new slot is visible with the array
            return grown[task];
        }

        /** Whether to measure this emit's size: always the first one, then every {@code 1/rate}-th emit. */
        boolean shouldSample(double rate) {
            if (!everSampled) {
                return true;
            }
            if (rate <= 0) {
                return false;
            }
            if (rate >= 1) {
                return true;
            }
            if (--untilSample > 0) {
                return false;
            }
            untilSample = (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.round(1.0 / rate)));
            return true;
        }

        void addSample(long bytes) {
            if (bytes < 0) {
                return;
            }
            sampledBytes.add(bytes);
            samples.increment();
            everSampled = true;
        }

        /** Every destination task's tuples since the last drain (tasks with none left out); resets them. */
        void drainTuples(IntLongConsumer out) {
            LongAdder[] slots = byTask;
            for (int task = 0; task < slots.length; task++) {
                if (slots[task] != null) {
                    long n = slots[task].sumThenReset();
                    if (n > 0) {
                        out.accept(task, n);
                    }
                }
            }
            for (Map.Entry<Integer, LongAdder> d : others.entrySet()) {
                long n = d.getValue().sumThenReset();
                if (n > 0) {
                    out.accept(d.getKey(), n);
                }
            }
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

    /** Receives (destination task, tuples) pairs from {@link StreamTraffic#drainTuples}. */
    @FunctionalInterface
    interface IntLongConsumer {
        void accept(int task, long tuples);
    }
}
