package io.schedulerpy.topologies;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.junit.jupiter.api.Test;

class CpuWorkTest {
    @Test
    void burnsAtLeastTheAskedThreadCpuTime() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadCpuTime();
        CpuWork.burnMicros(20_000);
        long burnedMicros = (threads.getCurrentThreadCpuTime() - before) / 1000;
        assertTrue(burnedMicros >= 20_000, "burned only " + burnedMicros + " us of CPU");
    }
}
