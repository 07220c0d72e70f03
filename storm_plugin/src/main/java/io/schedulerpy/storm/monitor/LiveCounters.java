package io.schedulerpy.storm.monitor;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The live counters of one worker ({@code docs/monitoring-format.md} §5): per task, cumulative since
 * the worker's monitor started, how many tuples it emitted on user streams, executed, acked and
 * failed, and (spouts) how many tuple trees it handed to the ackers ({@code __ack_init}). The brain
 * reads them about once per second to watch a deactivated topology drain.
 *
 * <p>The hot path is a {@link LongAdder} increment (plus a {@code startsWith("__")} test) on the
 * task's own {@link TaskLive}; writers are the task's executor thread and, for a ShellBolt, its
 * reader thread. Nothing is ever reset, so a reader never loses a count.
 */
final class LiveCounters {
    /** Storm's system streams ({@code __ack_init}, {@code __tick}, {@code __metrics_tick}, ...): {@code Utils.isSystemId}. */
    static final String SYSTEM_PREFIX = "__";
    /** {@code Acker.ACKER_INIT_STREAM_ID}: a spout emits one tuple on it per anchored tuple tree. */
    static final String ACK_INIT_STREAM = "__ack_init";

    private final ConcurrentHashMap<Integer, TaskLive> tasks = new ConcurrentHashMap<>();

    /** Whether {@code stream} is a user stream (null = {@code "default"}). */
    static boolean isUserStream(String stream) {
        return stream == null || !stream.startsWith(SYSTEM_PREFIX);
    }

    /** The counters of {@code task}, created on first use; {@code spout} = true marks it as a spout for good. */
    TaskLive register(int task, String component, boolean spout) {
        TaskLive t = tasks.computeIfAbsent(task, k -> new TaskLive(k, component == null ? "" : component));
        if (spout) {
            t.spout = true;
        }
        return t;
    }

    /** The counters of {@code task}, or null if no hook registered it. */
    TaskLive get(int task) {
        return tasks.get(task);
    }

    /** Every registered task's counters, by task id. */
    List<Snapshot> snapshot() {
        List<Snapshot> out = new ArrayList<>(tasks.size());
        for (TaskLive t : tasks.values()) {
            out.add(t.snapshot());
        }
        out.sort(Comparator.comparingInt(Snapshot::task));
        return out;
    }

    /**
     * One task's counters at one moment. {@code pending}: from the hooks, a spout's tuple trees handed
     * to the ackers and not yet acked or failed (never negative; bolts: 0); in counts mode
     * ({@link CountsSource#live}) the tuples waiting in the task's executor's queues.
     */
    record Snapshot(int task, String component, boolean spout, long emitted, long executed, long acked, long failed,
                    long ackInit, long pending) {
        /** The hooks' snapshot: {@code pending} = ack_init − acked − failed for a spout, 0 for a bolt. */
        Snapshot(int task, String component, boolean spout, long emitted, long executed, long acked, long failed,
                 long ackInit) {
            this(task, component, spout, emitted, executed, acked, failed, ackInit,
                spout ? Math.max(0, ackInit - acked - failed) : 0);
        }
    }

    /** The counters of one task. */
    static final class TaskLive {
        final int task;
        final String component;
        volatile boolean spout;
        private final LongAdder emitted = new LongAdder();
        private final LongAdder executed = new LongAdder();
        private final LongAdder acked = new LongAdder();
        private final LongAdder failed = new LongAdder();
        private final LongAdder ackInit = new LongAdder();

        TaskLive(int task, String component) {
            this.task = task;
            this.component = component;
        }

        /** Only spouts ack trees and send {@code __ack_init} (a volatile read, not a write, on the hot path). */
        private void markSpout() {
            if (!spout) {
                spout = true;
            }
        }

        /** One emit call (any number of destination tasks, none included). */
        void onEmit(String stream) {
            if (isUserStream(stream)) {
                emitted.increment();
            } else if (ACK_INIT_STREAM.equals(stream)) {
                ackInit.increment();
                markSpout();
            }
        }

        /** A bolt's {@code execute} returned for a tuple from {@code sourceStream}. */
        void onExecute(String sourceStream) {
            if (isUserStream(sourceStream)) {
                executed.increment();
            }
        }

        void onSpoutAck() {
            markSpout();
            acked.increment();
        }

        void onSpoutFail() {
            markSpout();
            failed.increment();
        }

        void onBoltAck(String sourceStream) {
            if (isUserStream(sourceStream)) {
                acked.increment();
            }
        }

        void onBoltFail(String sourceStream) {
            if (isUserStream(sourceStream)) {
                failed.increment();
            }
        }

        /**
         * The counters now. Acked and failed are read before {@code ack_init}: an ack always follows
         * its tree's {@code __ack_init} emit, so the pending count can be too high by the trees that
         * started during the read, never too low (a drain is never reported early).
         */
        Snapshot snapshot() {
            long a = acked.sum();
            long f = failed.sum();
            long i = ackInit.sum();
            return new Snapshot(task, component, spout, emitted.sum(), executed.sum(), a, f, i);
        }
    }
}
