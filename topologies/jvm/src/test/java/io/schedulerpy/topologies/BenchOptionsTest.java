package io.schedulerpy.topologies;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {
    private static final List<String> COMPONENTS = List.of("spout", "bolt_1", "sink");

    private static BenchOptions options(Map<String, Object> conf) {
        return new BenchOptions(conf, COMPONENTS);
    }

    @Test
    void defaultsWhenNothingIsSet() {
        BenchOptions o = options(Map.of());
        assertEquals(BenchOptions.DEFAULT_PAYLOAD_BYTES, o.payloadBytes());
        assertEquals(0.0, o.spoutRate());
        assertEquals(7, o.parallelism("bolt_1", 7));
        assertEquals(0, o.cpuMicros("sink"));
        assertEquals(20.0, o.cpuLoad("sink", 20.0));
        assertEquals(BenchOptions.DEFAULT_MEMORY_MB, o.memoryMb("spout"));
    }

    @Test
    void theControlFileIsAKnownOption() {
        options(Map.of(BenchOptions.CONTROL_FILE, "/tmp/control.properties"));
    }

    @Test
    void valuesAsStormParsesThemFromDashC() {
        // Storm parses -c values as JSON: numbers arrive as Long or Double, anything else as String
        BenchOptions o = options(Map.of(
            BenchOptions.PAYLOAD_BYTES, 4096L,
            BenchOptions.SPOUT_RATE, 250.5,
            BenchOptions.PARALLELISM, "3",
            BenchOptions.CPU_MICROS, 100L,
            BenchOptions.MEMORY_MB, 256L));
        assertEquals(4096, o.payloadBytes());
        assertEquals(250.5, o.spoutRate());
        assertEquals(3, o.parallelism("spout", 1));
        assertEquals(100, o.cpuMicros("bolt_1"));
        assertEquals(256.0, o.memoryMb("sink"));
    }

    @Test
    void aComponentOverrideWinsForThatComponentOnly() {
        BenchOptions o = options(Map.of(
            BenchOptions.PARALLELISM, 2L,
            BenchOptions.PARALLELISM + ".sink", 5L,
            BenchOptions.CPU_MICROS + ".bolt_1", 300L,
            BenchOptions.CPU_LOAD + ".spout", 80.0));
        assertEquals(2, o.parallelism("spout", 1));
        assertEquals(5, o.parallelism("sink", 1));
        assertEquals(300, o.cpuMicros("bolt_1"));
        assertEquals(0, o.cpuMicros("sink"));
        assertEquals(80.0, o.cpuLoad("spout", 50.0));
        assertEquals(20.0, o.cpuLoad("sink", 20.0));
    }

    @Test
    void otherKeysOfTheConfAreIgnored() {
        assertEquals(1024, options(Map.of("topology.workers", 3L, "benchmark.x", "y")).payloadBytes());
    }

    @Test
    void aTypoIsAnErrorNamingTheKnownKeys() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> options(Map.of("bench.payload.byte", 10L)));
        assertTrue(e.getMessage().contains("unknown option bench.payload.byte"), e.getMessage());
        assertTrue(e.getMessage().contains(BenchOptions.PAYLOAD_BYTES), e.getMessage());
    }

    @Test
    void anOverrideForAMissingComponentIsAnError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> options(Map.of(BenchOptions.PARALLELISM + ".bolt_9", 2L)));
        assertTrue(e.getMessage().contains("'bolt_9'"), e.getMessage());
        assertTrue(e.getMessage().contains("[bolt_1, sink, spout]"), e.getMessage());
    }

    @Test
    void malformedOrOutOfRangeValuesAreErrorsSayingWhatWasExpected() {
        assertMessage(Map.of(BenchOptions.PAYLOAD_BYTES, "lots"), "bench.payload.bytes: expected an integer, found 'lots'");
        assertMessage(Map.of(BenchOptions.PAYLOAD_BYTES, 0L), "bench.payload.bytes: expected a value from 1 to 1048576");
        assertMessage(Map.of(BenchOptions.PARALLELISM, 1.5), "bench.parallelism: expected an integer, found '1.5'");
        assertMessage(Map.of(BenchOptions.SPOUT_RATE, -1L), "bench.spout.rate: expected a value from 0 to");
        assertMessage(Map.of(BenchOptions.CPU_MICROS + ".sink", -5L), "bench.cpu.micros.sink: expected a value from 0");
        assertMessage(Map.of(BenchOptions.MEMORY_MB, "NaN"), "bench.memory.mb: expected a value from 1");
    }

    private static void assertMessage(Map<String, Object> conf, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> options(conf));
        assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }
}
