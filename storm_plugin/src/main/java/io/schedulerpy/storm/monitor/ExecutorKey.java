package io.schedulerpy.storm.monitor;

import java.util.Comparator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An executor: its task range [start, end] and component id.
 *
 * <p>Storm names an executor's thread {@code Thread-<n>-<component>-executor[<start>, <end>]}
 * ({@code Executor.execute()} passes {@code componentId + "-executor" + executorId}, a
 * {@code List<Long>} printed as {@code [4, 4]}, to {@code Utils.asyncLoop}, which appends it to the
 * thread's default name). {@link #fromThreadName} parses that.
 */
record ExecutorKey(int start, int end, String component) implements Comparable<ExecutorKey> {

    private static final Pattern EXECUTOR_THREAD =
        Pattern.compile("^(?:Thread-\\d+-)?(.+)-executor\\[(-?\\d+)(?:,\\s*|\\s+)(-?\\d+)\\]$");

    private static final Comparator<ExecutorKey> ORDER =
        Comparator.comparingInt(ExecutorKey::start).thenComparingInt(ExecutorKey::end)
            .thenComparing(ExecutorKey::component);

    /** The executor an executor thread runs, or null if {@code name} is not an executor thread's name. */
    static ExecutorKey fromThreadName(String name) {
        if (name == null) {
            return null;
        }
        Matcher m = EXECUTOR_THREAD.matcher(name);
        if (!m.matches()) {
            return null;
        }
        try {
            int start = Integer.parseInt(m.group(2));
            int end = Integer.parseInt(m.group(3));
            return new ExecutorKey(start, end, m.group(1));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    boolean contains(int task) {
        return task >= start && task <= end;
    }

    @Override
    public int compareTo(ExecutorKey o) {
        return ORDER.compare(this, o);
    }

    @Override
    public String toString() {
        return component + "[" + start + "-" + end + "]";
    }
}
