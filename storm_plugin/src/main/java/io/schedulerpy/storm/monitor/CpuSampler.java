package io.schedulerpy.storm.monitor;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * CPU of one worker per window: the JVM process, every executor's thread(s), and the multilang
 * subprocesses of every executor.
 *
 * <p><b>Threads.</b> CPU time per thread comes from {@link ThreadMXBean#getThreadCpuTime}. A
 * thread counts for an executor when
 * <ol>
 *   <li>its name is the executor thread's name, {@code Thread-<n>-<component>-executor[<s>, <e>]}
 *       (for an executor of this worker), or</li>
 *   <li>it called the task hook for a task of the executor (a ShellBolt's reader thread emits and
 *       acks for its task; any user thread that emits is found the same way), or</li>
 *   <li>it is a ShellBolt writer thread ({@code ShellBolt$BoltWriterRunnable} on its stack): paired
 *       with a ShellBolt reader thread ({@code ShellBolt$BoltReaderRunnable}) by thread id
 *       ({@link #pairWritersWithReaders}) and counted for that reader's executor (if known: a reader
 *       is known once it emitted or acked).</li>
 * </ol>
 * Everything else (Netty, transfer, timers, GC is not a Java thread at all, the heartbeat pools of
 * shell components, this monitor) is overhead: {@code overhead = process − Σ executor threads}.
 *
 * <p><b>Subprocesses.</b> pid → task comes from {@link MonitorShellLogHandler} (exact: Storm hands
 * it the {@code ShellProcess} and the task's context right after the handshake) or, for children of
 * the JVM it did not register, from their command line: a child whose {@code /proc/<pid>/cmdline}
 * runs a shell component ({@code execution_command} + {@code script}) of which exactly one
 * executor runs in this worker. CPU is utime + stime from {@code /proc/<pid>/stat}.
 *
 * <p>Thread and process CPU first seen after the first sample counts from 0 (a new thread's or
 * process's whole CPU goes into the window it appeared in); at the first sample, the current values
 * are the baseline. CPU of a thread or process that ended since the last sample is lost (for
 * threads it ends up in the overhead).
 */
final class CpuSampler {
    static final String SHELL_BOLT_WRITER = "org.apache.storm.task.ShellBolt$BoltWriterRunnable";
    static final String SHELL_BOLT_READER = "org.apache.storm.task.ShellBolt$BoltReaderRunnable";
    private static final int MAX_STACK_INSPECTIONS = 3;

    private enum Kind { EXECUTOR, UNKNOWN, SHELL_READER, SHELL_WRITER, OTHER }

    private static final class ThreadState {
        final String name;
        Kind kind;
        ExecutorKey executor;
        long lastCpuNs;
        int inspections;

        ThreadState(String name) {
            this.name = name;
        }
    }

    private static final class ProcState {
        final long startTime;
        double lastCpuMs;

        ProcState(long startTime, double lastCpuMs) {
            this.startTime = startTime;
            this.lastCpuMs = lastCpuMs;
        }
    }

    /** A window's CPU. */
    record Result(double processCpuMs, double executorThreadsCpuMs, List<WindowRecord.ExecutorCpu> executors) {
        double overheadCpuMs() {
            return Math.max(0, processCpuMs - executorThreadsCpuMs);
        }
    }

    private final WorkerView view;
    private final Map<Long, Integer> hookThreads;
    private final Map<Long, Integer> registeredPids;
    private final Map<Integer, Long> shellBolts;
    private final OnceLog problems;
    private final ThreadMXBean threadMx;
    private final boolean threadCpu;
    private final boolean procAvailable;
    private final long selfPid = ProcessHandle.current().pid();

    private final Map<Long, ThreadState> threads = new HashMap<>();
    private final Map<Long, ProcState> procs = new HashMap<>();
    private final Map<Long, Integer> fallbackPids = new HashMap<>();
    private final Set<Long> unattributable = new HashSet<>();
    private long lastProcessCpuNs = -1;
    private String lastAttribution = "";
    private boolean first = true;

    /**
     * @param view           the worker's tasks and components
     * @param hookThreads    thread id → task, for threads seen calling a task hook (live map)
     * @param registeredPids subprocess pid → task, from the ShellLogHandler (live map; dead pids are removed)
     * @param problems       where to report problems once
     */
    CpuSampler(WorkerView view, Map<Long, Integer> hookThreads, Map<Long, Integer> registeredPids, OnceLog problems) {
        this(view, hookThreads, registeredPids, problems, Map.of());
    }

    /**
     * @param shellBolts task → thread-id watermark of each ShellBolt's prepare (live map; from the
     *                   ShellLogHandler): attributes ShellBolt reader threads without a task hook
     */
    CpuSampler(WorkerView view, Map<Long, Integer> hookThreads, Map<Long, Integer> registeredPids, OnceLog problems,
               Map<Integer, Long> shellBolts) {
        this.shellBolts = shellBolts;
        this.view = view;
        this.hookThreads = hookThreads;
        this.registeredPids = registeredPids;
        this.problems = problems;
        this.threadMx = ManagementFactory.getThreadMXBean();
        boolean ok = false;
        try {
            ok = threadMx.isThreadCpuTimeSupported();
            if (ok && !threadMx.isThreadCpuTimeEnabled()) {
                threadMx.setThreadCpuTimeEnabled(true);
            }
        } catch (RuntimeException e) {
            problems.warn("thread-cpu", "scheduler-py monitor: cannot enable thread CPU time", e);
        }
        this.threadCpu = ok;
        if (!ok) {
            problems.warn("thread-cpu", "scheduler-py monitor: this JVM has no per-thread CPU time; "
                + "thread_cpu_ms will be 0", null);
        }
        this.procAvailable = ProcStat.available();
        if (!procAvailable) {
            problems.warn("proc", "scheduler-py monitor: /proc/<pid>/stat is unreadable (not Linux?); "
                + "subprocess_cpu_ms will be 0", null);
        }
    }

    /** Take a sample; the first call only sets the baselines (its result is all zeros). */
    synchronized Result sample() {
        Map<ExecutorKey, double[]> cpu = new TreeMap<>();          // executor → {thread ms, subprocess ms}
        Map<ExecutorKey, Set<Long>> pids = new HashMap<>();
        double processMs = processCpuDeltaMs();
        double executorThreadsMs = sampleThreads(cpu);
        sampleSubprocesses(cpu, pids);
        first = false;

        List<WindowRecord.ExecutorCpu> out = new ArrayList<>();
        for (Map.Entry<ExecutorKey, double[]> e : cpu.entrySet()) {
            Set<Long> p = pids.get(e.getKey());
            out.add(new WindowRecord.ExecutorCpu(e.getKey(), e.getValue()[0], e.getValue()[1],
                p == null ? List.of() : new ArrayList<>(new TreeSet<>(p))));
        }
        return new Result(processMs, executorThreadsMs, out);
    }

    private double processCpuDeltaMs() {
        long now = processCpuNs();
        if (now < 0) {
            return 0;
        }
        long delta = lastProcessCpuNs < 0 || first ? 0 : now - lastProcessCpuNs;
        lastProcessCpuNs = now;
        return Math.max(0, delta) / 1e6;
    }

    private long processCpuNs() {
        try {
            OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean) {
                long ns = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
                if (ns >= 0) {
                    return ns;
                }
            }
        } catch (Throwable t) {
            problems.warn("process-cpu-mx", "scheduler-py monitor: OperatingSystemMXBean.getProcessCpuTime failed", t);
        }
        ProcStat self = ProcStat.read(selfPid);
        return self == null ? -1 : Math.round(self.cpuMs() * 1e6);
    }

    /** Adds each executor's thread CPU into {@code cpu}; returns the total attributed to executors. */
    private double sampleThreads(Map<ExecutorKey, double[]> cpu) {
        long[] ids = threadMx.getAllThreadIds();
        Set<Long> live = new HashSet<>(ids.length * 2);
        List<Long> fresh = new ArrayList<>();
        for (long id : ids) {
            live.add(id);
            if (!threads.containsKey(id)) {
                ThreadInfo ti = threadMx.getThreadInfo(id);
                if (ti == null) {
                    continue;
                }
                ThreadState st = new ThreadState(ti.getThreadName());
                ExecutorKey k = ExecutorKey.fromThreadName(st.name);
                if (k != null && view.isLocal(k)) {
                    st.kind = Kind.EXECUTOR;
                    st.executor = k;
                } else {
                    st.kind = Kind.UNKNOWN;
                }
                threads.put(id, st);
                fresh.add(id);
            }
        }
        threads.keySet().retainAll(live);
        hookThreads.keySet().retainAll(live);

        // every executor of this worker is listed, even with no CPU in the window
        Map<Integer, ExecutorKey> taskToExecutor = new HashMap<>();
        for (ThreadState st : threads.values()) {
            if (st.kind == Kind.EXECUTOR) {
                cpu.computeIfAbsent(st.executor, k -> new double[2]);
                for (int t = st.executor.start(); t <= st.executor.end(); t++) {
                    taskToExecutor.put(t, st.executor);
                }
            }
        }
        if (!threadCpu) {
            return 0;
        }

        classifyUnknown();
        // every ShellBolt reader, with its executor when known (a reader is known once it emitted or acked;
        // the reader of a bolt that never got a tuple is not, and neither is then its writer)
        TreeMap<Long, Optional<ExecutorKey>> shellReaders = new TreeMap<>();
        TreeSet<Long> shellWriters = new TreeSet<>();
        for (Map.Entry<Long, ThreadState> e : threads.entrySet()) {
            if (e.getValue().kind == Kind.SHELL_READER) {
                shellReaders.put(e.getKey(), Optional.ofNullable(executorOfThread(e.getKey(), e.getValue(), taskToExecutor)));
            } else if (e.getValue().kind == Kind.SHELL_WRITER) {
                shellWriters.add(e.getKey());
            }
        }
        Map<Long, Integer> readerTasks = pairReadersWithShellBolts(shellReaders, shellBolts);
        for (Map.Entry<Long, Integer> e : readerTasks.entrySet()) {
            hookThreads.putIfAbsent(e.getKey(), e.getValue());
            shellReaders.put(e.getKey(), Optional.ofNullable(executorOfTask(e.getValue(), taskToExecutor)));
        }
        Map<Long, Long> writerToReader = pairWritersWithReaders(shellReaders.navigableKeySet(), shellWriters);

        Set<Long> freshSet = new HashSet<>(fresh);
        Map<ExecutorKey, List<String>> attribution = new TreeMap<>();
        double total = 0;
        for (Map.Entry<Long, ThreadState> e : threads.entrySet()) {
            long id = e.getKey();
            ThreadState st = e.getValue();
            long now = threadMx.getThreadCpuTime(id);
            if (now < 0) {
                continue;                                   // ended meanwhile
            }
            long base = freshSet.contains(id) ? (first ? now : 0) : st.lastCpuNs;
            st.lastCpuNs = now;
            long delta = Math.max(0, now - base);
            ExecutorKey k = executorOfThread(id, st, taskToExecutor);
            if (k == null && st.kind == Kind.SHELL_WRITER) {
                Long reader = writerToReader.get(id);
                k = reader == null ? null : shellReaders.get(reader).orElse(null);
            }
            if (k != null) {
                attribution.computeIfAbsent(k, x -> new ArrayList<>()).add(describe(id, st));
                if (delta > 0) {
                    cpu.computeIfAbsent(k, x -> new double[2])[0] += delta / 1e6;
                    total += delta / 1e6;
                }
            }
        }
        lastAttribution = attribution.toString();
        return total;
    }

    /**
     * Pairs ShellBolt writer threads with reader threads by thread id. {@code ShellBolt.prepare}
     * creates its reader and then its writer, so each writer's reader has a lower id; taking the
     * writers in id order, each gets the oldest reader not yet paired that is older than it. This is
     * right when ShellBolts start one after another, and when two start at once and their threads are
     * created as R1 R2 W1 W2; it is wrong only for R1 R2 W2 W1 (thread creations of two executors
     * interleaved within microseconds).
     */
    static Map<Long, Long> pairWritersWithReaders(java.util.NavigableSet<Long> readers, java.util.SortedSet<Long> writers) {
        Map<Long, Long> out = new HashMap<>();
        TreeSet<Long> free = new TreeSet<>(readers);
        for (long w : writers) {
            Long r = free.isEmpty() ? null : free.first();
            if (r != null && r < w) {
                out.put(w, r);
                free.remove(r);
            }
        }
        return out;
    }

    /**
     * ShellBolt reader threads not attributed yet (no task hook saw them) → task, from the thread-id
     * watermark each ShellBolt's prepare registered just before creating its threads: taking the
     * watermarks in order, each gets the lowest unattributed reader above it. Right when ShellBolts
     * start one after another (the subprocess handshake between two takes milliseconds); wrong only
     * when two executors' handshakes end within microseconds and their threads are created in the
     * other order.
     */
    static Map<Long, Integer> pairReadersWithShellBolts(java.util.NavigableMap<Long, Optional<ExecutorKey>> readers,
                                                        Map<Integer, Long> shellBolts) {
        Map<Long, Integer> out = new HashMap<>();
        if (shellBolts == null || shellBolts.isEmpty()) {
            return out;
        }
        TreeSet<Long> free = new TreeSet<>();
        for (Map.Entry<Long, Optional<ExecutorKey>> r : readers.entrySet()) {
            if (r.getValue().isEmpty()) {
                free.add(r.getKey());
            }
        }
        List<Map.Entry<Integer, Long>> marks = new ArrayList<>(shellBolts.entrySet());
        marks.sort(Map.Entry.comparingByValue());
        for (Map.Entry<Integer, Long> m : marks) {
            Long reader = free.higher(m.getValue());
            if (reader != null) {
                out.put(reader, m.getKey());
                free.remove(reader);
            }
        }
        return out;
    }

    private String describe(long id, ThreadState st) {
        switch (st.kind) {
            case EXECUTOR:
                return "'" + st.name + "'";
            case SHELL_READER:
                return "'" + st.name + "' (ShellBolt reader)";
            case SHELL_WRITER:
                return "'" + st.name + "' (ShellBolt writer)";
            default:
                return "'" + st.name + "' (calls the task hook)";
        }
    }

    /** Which threads counted for which executor in the last sample, for the log. */
    synchronized String lastAttribution() {
        return lastAttribution;
    }

    private ExecutorKey executorOfThread(long id, ThreadState st, Map<Integer, ExecutorKey> taskToExecutor) {
        if (st.kind == Kind.EXECUTOR) {
            return st.executor;
        }
        Integer task = hookThreads.get(id);
        return task == null ? null : executorOfTask(task, taskToExecutor);
    }

    /** The live executor running {@code task}, or a one-task executor named after the task's component. */
    private ExecutorKey executorOfTask(int task, Map<Integer, ExecutorKey> taskToExecutor) {
        ExecutorKey k = taskToExecutor.get(task);
        if (k != null) {
            return k;
        }
        String c = view.componentOf(task);
        return c == null ? null : new ExecutorKey(task, task, c);
    }

    /** Look at the stacks of threads not identified yet (at most a few times each). */
    private void classifyUnknown() {
        for (Map.Entry<Long, ThreadState> e : threads.entrySet()) {
            ThreadState st = e.getValue();
            if (st.kind != Kind.UNKNOWN || st.inspections >= MAX_STACK_INSPECTIONS) {
                continue;
            }
            ThreadInfo ti = threadMx.getThreadInfo(e.getKey(), 64);
            if (ti == null) {
                continue;
            }
            StackTraceElement[] stack = ti.getStackTrace();
            if (stack.length == 0) {
                continue;                                   // not running Java code yet; look again next time
            }
            st.inspections++;
            for (StackTraceElement f : stack) {
                if (SHELL_BOLT_WRITER.equals(f.getClassName())) {
                    st.kind = Kind.SHELL_WRITER;
                    break;
                }
                if (SHELL_BOLT_READER.equals(f.getClassName())) {
                    st.kind = Kind.SHELL_READER;
                    break;
                }
            }
            if (st.kind == Kind.UNKNOWN && st.inspections >= MAX_STACK_INSPECTIONS) {
                st.kind = Kind.OTHER;
            }
        }
    }

    private void sampleSubprocesses(Map<ExecutorKey, double[]> cpu, Map<ExecutorKey, Set<Long>> pids) {
        if (!procAvailable) {
            return;
        }
        Map<Integer, ExecutorKey> taskToExecutor = new HashMap<>();
        for (ExecutorKey k : cpu.keySet()) {
            for (int t = k.start(); t <= k.end(); t++) {
                taskToExecutor.put(t, k);
            }
        }
        discoverChildren(taskToExecutor);

        Map<Long, Integer> attributed = new HashMap<>(fallbackPids);
        attributed.putAll(registeredPids);                  // the ShellLogHandler's word wins
        for (Iterator<Map.Entry<Long, Integer>> it = attributed.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Integer> e = it.next();
            long pid = e.getKey();
            ProcStat s = ProcStat.read(pid);
            if (s == null) {                                // gone
                procs.remove(pid);
                registeredPids.remove(pid);
                fallbackPids.remove(pid);
                continue;
            }
            ProcState ps = procs.get(pid);
            if (ps == null || ps.startTime != s.startTimeTicks) {
                ps = new ProcState(s.startTimeTicks, first ? s.cpuMs() : 0);
                procs.put(pid, ps);
            }
            double delta = Math.max(0, s.cpuMs() - ps.lastCpuMs);
            ps.lastCpuMs = s.cpuMs();
            ExecutorKey k = executorOfTask(e.getValue(), taskToExecutor);
            if (k == null) {
                continue;
            }
            cpu.computeIfAbsent(k, x -> new double[2])[1] += delta;
            pids.computeIfAbsent(k, x -> new HashSet<>()).add(pid);
        }
        procs.keySet().retainAll(attributed.keySet());
    }

    /** Attribute children of this JVM that the ShellLogHandler did not register, by their command line. */
    private void discoverChildren(Map<Integer, ExecutorKey> taskToExecutor) {
        if (view.shellComponents().isEmpty()) {
            return;
        }
        Set<Long> children = new HashSet<>();
        try {
            ProcessHandle.current().children().forEach(p -> children.add(p.pid()));
        } catch (RuntimeException e) {
            problems.warn("children", "scheduler-py monitor: cannot list the worker's child processes", e);
            return;
        }
        fallbackPids.keySet().retainAll(children);
        unattributable.retainAll(children);
        for (long pid : children) {
            if (registeredPids.containsKey(pid) || fallbackPids.containsKey(pid) || unattributable.contains(pid)) {
                continue;
            }
            List<String> argv = ProcStat.cmdline(pid);
            List<String> components = view.shellComponentsMatching(argv);
            if (components.isEmpty()) {
                unattributable.add(pid);                    // not a multilang subprocess of ours
                continue;
            }
            List<ExecutorKey> candidates = new ArrayList<>();
            for (ExecutorKey k : new TreeSet<>(taskToExecutor.values())) {
                if (components.contains(k.component())) {
                    candidates.add(k);
                }
            }
            if (candidates.isEmpty()) {
                // no executor thread of the component seen yet: its tasks in this worker
                for (int task : new TreeSet<>(view.workerTasks())) {
                    String c = view.componentOf(task);
                    if (c != null && components.contains(c)) {
                        candidates.add(new ExecutorKey(task, task, c));
                    }
                }
            }
            if (candidates.size() == 1) {
                fallbackPids.put(pid, candidates.get(0).start());
            } else if (!candidates.isEmpty()) {
                // may still be registered by the ShellLogHandler a moment later; decided next window
                problems.warn("unattributed-" + components, "scheduler-py monitor: multilang subprocess(es) of "
                    + components + " cannot be told apart (" + candidates.size() + " executors in this worker); "
                    + "set topology.multilang.log.handler: \"" + MonitorShellLogHandler.class.getName() + "\"", null);
            }
        }
    }

    /** Thread ids per executor (for tests and debugging). */
    synchronized Map<ExecutorKey, List<Long>> executorThreads() {
        Map<ExecutorKey, List<Long>> out = new TreeMap<>();
        for (Map.Entry<Long, ThreadState> e : threads.entrySet()) {
            if (e.getValue().kind == Kind.EXECUTOR) {
                out.computeIfAbsent(e.getValue().executor, k -> new ArrayList<>()).add(e.getKey());
            }
        }
        return out;
    }

    /** For tests: a fresh live map of the kind the monitor passes in. */
    static <K, V> Map<K, V> liveMap() {
        return new ConcurrentHashMap<>();
    }
}
