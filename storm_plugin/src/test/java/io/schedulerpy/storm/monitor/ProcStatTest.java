package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ProcStatTest {
    static final String LINE = "23117 (streamparse_run) S 23001 23001 22990 0 -1 4194304 5234 0 0 0 "
        + "4107 212 0 0 20 0 3 0 1234567 250000000 9000 18446744073709551615 1 1 0 0 0 0 0 16781312 2 0 0 0 17 1 0 0 0 0 0";

    @Test
    void parsesFields() {
        ProcStat s = ProcStat.parse(LINE);
        assertEquals(23117, s.pid);
        assertEquals("streamparse_run", s.comm);
        assertEquals('S', s.state);
        assertEquals(23001, s.ppid);
        assertEquals(4107, s.utimeTicks);
        assertEquals(212, s.stimeTicks);
        assertEquals(1234567, s.startTimeTicks);
        assertEquals((4107 + 212) * 10.0, s.cpuMs(), 1e-9);
    }

    @Test
    void commWithSpacesAndParentheses() {
        ProcStat s = ProcStat.parse(LINE.replace("(streamparse_run)", "(a (b) c) d)"));
        assertEquals("a (b) c) d", s.comm);
        assertEquals(4107, s.utimeTicks);
        assertEquals(1234567, s.startTimeTicks);
    }

    @Test
    void malformed() {
        assertThrows(IllegalArgumentException.class, () -> ProcStat.parse("12 (x) S 1 2 3"));
        assertThrows(IllegalArgumentException.class, () -> ProcStat.parse("garbage"));
        assertThrows(IllegalArgumentException.class, () -> ProcStat.parse(null));
    }

    @Test
    void clockTicksMatchGetconf() throws Exception {
        assumeTrue(ProcStat.available(), "needs Linux /proc");
        Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
        String out;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            out = r.readLine();
        }
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertEquals(Long.toString(ProcStat.CLK_TCK), out == null ? null : out.trim());
    }

    @Test
    void ownProcessCpuGrowsAndMatchesTheJvmsView() {
        assumeTrue(ProcStat.available(), "needs Linux /proc");
        long pid = ProcessHandle.current().pid();
        ProcStat before = ProcStat.read(pid);
        assertNotNull(before);
        assertEquals(pid, before.pid);
        burn(300);
        ProcStat after = ProcStat.read(pid);
        assertEquals(before.startTimeTicks, after.startTimeTicks);
        assertTrue(after.cpuMs() - before.cpuMs() >= 150, "burned " + (after.cpuMs() - before.cpuMs()) + " ms");
        // same clock as the JVM's own process CPU, within a couple of ticks
        long jvmNs = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
            .getOperatingSystemMXBean()).getProcessCpuTime();
        double procMs = ProcStat.read(pid).cpuMs();
        assertTrue(Math.abs(jvmNs / 1e6 - procMs) < 100, "jvm " + jvmNs / 1e6 + " ms vs /proc " + procMs + " ms");
        assertTrue(ProcStat.cmdline(pid).get(0).contains("java"), ProcStat.cmdline(pid).toString());
    }

    @Test
    void childProcessCpu() throws Exception {
        assumeTrue(ProcStat.available(), "needs Linux /proc");
        Process child = new ProcessBuilder("sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; sleep 30",
            "scheduler-py-test").start();
        try {
            long pid = child.pid();
            ProcStat s = ProcStat.read(pid);
            assertNotNull(s);
            assertEquals(ProcessHandle.current().pid(), s.ppid);
            assertEquals(List.of("sh", "-c"), ProcStat.cmdline(pid).subList(0, 2));
            assertEquals("scheduler-py-test", ProcStat.cmdline(pid).get(3));
            long deadline = System.currentTimeMillis() + 20_000;
            double cpu = 0;
            while (System.currentTimeMillis() < deadline) {
                cpu = ProcStat.read(pid).cpuMs();
                if (cpu >= 100) {
                    break;
                }
                Thread.sleep(50);
            }
            assertTrue(cpu >= 100, "child used " + cpu + " ms");
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
        assertNull(ProcStat.read(child.pid()));
    }

    /** Burn {@code ms} of this thread's CPU time (not wall time: the build machine may be busy). */
    static void burn(long ms) {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long start = mx.getCurrentThreadCpuTime();
        long wallDeadline = System.nanoTime() + 60_000_000_000L;
        long x = 0;
        while (mx.getCurrentThreadCpuTime() - start < ms * 1_000_000 && System.nanoTime() < wallDeadline) {
            for (int i = 0; i < 10_000; i++) {
                x += i % 7;
            }
        }
        if (x == 42) {
            System.out.print("");
        }
    }
}
