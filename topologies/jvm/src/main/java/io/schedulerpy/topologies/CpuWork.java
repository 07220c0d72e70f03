package io.schedulerpy.topologies;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Per-tuple CPU work: burns a given amount of the calling thread's CPU time (not wall time, so a
 * busy machine does not shorten the work), the knob R-Storm's compute-bound micro-benchmarks turn
 * (docs in topologies/README.md). Falls back to wall time where the JVM cannot measure thread
 * CPU time.
 */
final class CpuWork {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final boolean THREAD_CPU = THREADS.isCurrentThreadCpuTimeSupported();
    private static final int STEPS_PER_CHECK = 512;

    /** Keeps the arithmetic from being optimised away. */
    private static volatile long sink;

    private CpuWork() {
    }

    /** Burns {@code micros} microseconds of this thread's CPU time; nothing for 0. */
    static void burnMicros(long micros) {
        if (micros <= 0) {
            return;
        }
        long nanos = micros * 1000L;
        long start = now();
        long x = start;
        do {
            for (int i = 0; i < STEPS_PER_CHECK; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        } while (now() - start < nanos);
        sink = x;
    }

    private static long now() {
        return THREAD_CPU ? THREADS.getCurrentThreadCpuTime() : System.nanoTime();
    }
}
