package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class CpuSamplerTest {
    private final OnceLog problems = new OnceLog(LoggerFactory.getLogger(getClass()));

    /** A thread that burns CPU in bursts until released. */
    static Thread burner(String name, CountDownLatch stop, long burnMs) {
        return burner(name, stop, burnMs, new CountDownLatch(1));
    }

    /** A thread that burns {@code burnMs} of CPU, counts {@code burned} down, and waits for {@code stop}. */
    static Thread burner(String name, CountDownLatch stop, long burnMs, CountDownLatch burned) {
        Thread t = new Thread(() -> {
            ProcStatTest.burn(burnMs);
            burned.countDown();
            try {
                stop.await();
            } catch (InterruptedException e) {
                // done
            }
        }, name);
        t.setDaemon(true);
        return t;
    }

    static WindowRecord.ExecutorCpu find(CpuSampler.Result r, int start) {
        return r.executors().stream().filter(e -> e.executor().start() == start).findFirst().orElse(null);
    }

    @Test
    void executorThreadsHelpersAndOverhead() throws Exception {
        WorkerView view = new WorkerView(List.of(-1, 1, 3, 4), Map.of(-1, "__system", 1, "__acker", 3, "split", 4, "count",
            7, "count"), Map.of());
        Map<Long, Integer> hookThreads = CpuSampler.liveMap();
        CpuSampler s = new CpuSampler(view, hookThreads, CpuSampler.liveMap(), problems);
        s.sample();

        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch burned = new CountDownLatch(4);
        Thread split = burner("Thread-90-split-executor[3, 3]", stop, 300, burned);
        Thread helper = burner("Thread-91", stop, 200, burned);      // e.g. a ShellBolt reader thread of task 4
        Thread idle = burner("Thread-92-__acker-executor[1, 1]", stop, 0, burned);
        Thread foreign = burner("Thread-93-count-executor[7, 7]", stop, 100, burned);   // task 7: another worker's
        hookThreads.put(helper.getId(), 4);
        for (Thread t : List.of(split, helper, idle, foreign)) {
            t.start();
        }
        ProcStatTest.burn(100);                              // overhead: this thread is no executor's
        assertTrue(burned.await(60, TimeUnit.SECONDS));
        CpuSampler.Result r = s.sample();

        WindowRecord.ExecutorCpu e3 = find(r, 3);
        assertNotNull(e3);
        assertEquals("split", e3.executor().component());
        assertTrue(e3.threadCpuMs() >= 150 && e3.threadCpuMs() < 1000, "split " + e3.threadCpuMs());
        WindowRecord.ExecutorCpu e4 = find(r, 4);
        assertNotNull(e4, "helper thread of task 4 counted for executor [4, 4]");
        assertEquals("count", e4.executor().component());
        assertTrue(e4.threadCpuMs() >= 100, "count " + e4.threadCpuMs());
        WindowRecord.ExecutorCpu e1 = find(r, 1);
        assertNotNull(e1, "idle executors are listed too");
        assertTrue(e1.threadCpuMs() < 50);
        assertEquals(null, find(r, 7), "executors of other workers are left out");

        assertTrue(r.processCpuMs() >= e3.threadCpuMs() + e4.threadCpuMs(), r.toString());
        assertTrue(r.overheadCpuMs() >= 50, "overhead " + r.overheadCpuMs());
        assertEquals(r.processCpuMs() - r.executorThreadsCpuMs(), r.overheadCpuMs(), 1e-6);

        // next window: nothing burns any more
        Thread.sleep(50);
        CpuSampler.Result r2 = s.sample();
        assertTrue(find(r2, 3).threadCpuMs() < 30, "split idle " + find(r2, 3).threadCpuMs());
        stop.countDown();
        for (Thread t : List.of(split, helper, idle, foreign)) {
            t.join(5000);
        }
        CpuSampler.Result r3 = s.sample();
        assertEquals(null, find(r3, 3), "ended executor threads drop out");
    }

    @Test
    void subprocessesRegisteredAndByCommandLine() throws Exception {
        assumeTrue(ProcStat.available(), "needs Linux /proc");
        WorkerView view = new WorkerView(List.of(5, 6), Map.of(5, "pyspout", 6, "pybolt"),
            Map.of("pyspout", new WorkerView.ShellCommand("sh", "spout-marker"),
                "pybolt", new WorkerView.ShellCommand("/bin/sh", "bolt-marker")));
        Map<Long, Integer> pids = CpuSampler.liveMap();
        CpuSampler s = new CpuSampler(view, CpuSampler.liveMap(), pids, problems);
        s.sample();
        String busy = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo done; sleep 60";
        Process registered = new ProcessBuilder("sh", "-c", busy, "spout-marker").start();
        Process byCmdline = new ProcessBuilder("sh", "-c", busy, "bolt-marker").start();
        Process stranger = new ProcessBuilder("sh", "-c", busy, "other").start();
        try {
            pids.put(registered.pid(), 5);                   // as MonitorShellLogHandler does
            waitForLine(registered);
            waitForLine(byCmdline);
            CpuSampler.Result r = s.sample();
            WindowRecord.ExecutorCpu e5 = find(r, 5);
            WindowRecord.ExecutorCpu e6 = find(r, 6);
            assertNotNull(e5);
            assertNotNull(e6);
            assertEquals(List.of(registered.pid()), e5.subprocessPids());
            assertEquals(List.of(byCmdline.pid()), e6.subprocessPids(), "attributed by its command line");
            assertTrue(e5.subprocessCpuMs() >= 100, "spout subprocess " + e5.subprocessCpuMs());
            assertTrue(e6.subprocessCpuMs() >= 100, "bolt subprocess " + e6.subprocessCpuMs());
            for (WindowRecord.ExecutorCpu e : r.executors()) {
                assertTrue(!e.subprocessPids().contains(stranger.pid()), "unrelated children are ignored");
            }
            // the subprocesses now sleep: ~0 in the next window
            CpuSampler.Result r2 = s.sample();
            assertTrue(find(r2, 5).subprocessCpuMs() < 30, "idle " + find(r2, 5).subprocessCpuMs());
        } finally {
            for (Process p : List.of(registered, byCmdline, stranger)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
        CpuSampler.Result r3 = s.sample();
        assertEquals(null, find(r3, 5), "dead subprocesses drop out");
        assertTrue(pids.isEmpty(), "and are forgotten");
    }

    /** Wait for the first line of a process's output (the end of its busy loop). */
    static void waitForLine(Process p) throws java.io.IOException {
        new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
    }

    /** Wait until a process has used at least {@code ms} of CPU and then stopped using CPU (its busy loop ended). */
    static void waitForCpu(long pid, double ms) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 30_000;
        double last = -1;
        while (System.currentTimeMillis() < deadline) {
            ProcStat st = ProcStat.read(pid);
            if (st != null && st.cpuMs() >= ms && st.cpuMs() == last) {
                return;
            }
            last = st == null ? -1 : st.cpuMs();
            Thread.sleep(200);
        }
    }

    @Test
    void shellBoltWritersArePairedWithReadersInCreationOrder() {
        // one bolt after the other: R W R W
        assertEquals(Map.of(11L, 10L, 21L, 20L),
            CpuSampler.pairWritersWithReaders(new java.util.TreeSet<>(List.of(10L, 20L)), new java.util.TreeSet<>(List.of(11L, 21L))));
        // two bolts preparing at once, thread creations interleaved: R1 R2 W1 W2
        assertEquals(Map.of(55L, 53L, 56L, 54L),
            CpuSampler.pairWritersWithReaders(new java.util.TreeSet<>(List.of(53L, 54L)), new java.util.TreeSet<>(List.of(55L, 56L))));
        // a writer older than every free reader stays unpaired
        assertEquals(Map.of(),
            CpuSampler.pairWritersWithReaders(new java.util.TreeSet<>(List.of(30L)), new java.util.TreeSet<>(List.of(29L))));
        assertEquals(Map.of(31L, 30L),
            CpuSampler.pairWritersWithReaders(new java.util.TreeSet<>(List.of(30L)), new java.util.TreeSet<>(List.of(31L, 40L))));
    }

    @Test
    void shellBoltReadersArePairedWithTheWatermarksTheirPrepareRegistered() {
        java.util.TreeMap<Long, java.util.Optional<ExecutorKey>> readers = new java.util.TreeMap<>();
        readers.put(31L, java.util.Optional.empty());
        readers.put(45L, java.util.Optional.empty());
        readers.put(50L, java.util.Optional.of(new ExecutorKey(7, 7, "known")));   // a hook saw it
        readers.put(52L, java.util.Optional.empty());
        // one after another: task 4 (mark 30) made 31, task 5 (mark 44) made 45; task 6's two
        // executors' handshakes ended together (marks 46, 47): 52 is the first free reader above
        java.util.Map<Long, Integer> out = CpuSampler.pairReadersWithShellBolts(readers,
            java.util.Map.of(4, 30L, 5, 44L, 6, 46L, 8, 47L));
        assertEquals(java.util.Map.of(31L, 4, 45L, 5, 52L, 6), out);
        assertEquals(java.util.Map.of(), CpuSampler.pairReadersWithShellBolts(readers, java.util.Map.of()));
    }
}
