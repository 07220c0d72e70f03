package io.schedulerpy.topologies;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.junit.jupiter.api.Test;

class SubmitTest {
    @Test
    void stormDefaultsAreIssue20sShapeAndDashCOverridesThem() {
        Submit.Request defaults = Submit.Request.parse(List.of("wordcount", "wc"), Map.of());
        assertEquals(3, defaults.conf.get(Config.TOPOLOGY_WORKERS));
        assertEquals(1, defaults.conf.get(Config.TOPOLOGY_ACKER_EXECUTORS));
        assertEquals(1000, defaults.conf.get(Config.TOPOLOGY_MAX_SPOUT_PENDING));

        Submit.Request request = Submit.Request.parse(List.of("linear", "lin"),
            Map.of(Config.TOPOLOGY_WORKERS, 1L, BenchOptions.PAYLOAD_BYTES, 64L, "scheduler.brain.algorithm", "td"));
        assertEquals(Kind.LINEAR, request.kind);
        assertEquals("lin", request.name);
        assertEquals(1L, request.conf.get(Config.TOPOLOGY_WORKERS));
        assertEquals("td", request.conf.get("scheduler.brain.algorithm"));
        assertEquals(64, request.options.payloadBytes());
    }

    @Test
    void describeNamesTheShapeAndTheOptions() {
        Submit.Request request = Submit.Request.parse(List.of("star", "s1"),
            Map.of(BenchOptions.SPOUT_RATE, 500L, BenchOptions.PARALLELISM + ".center", 4L));
        String line = request.describe(request.topology());
        assertTrue(line.startsWith("star as 's1' (spout_0 x2, spout_1 x2, center x4, bolt_output_0 x2"), line);
        assertTrue(line.contains("payload 1024 B, spout rate 500.0 tuples/s per executor, topology.workers=3"), line);
    }

    @Test
    void badArgumentsAreErrorsSayingWhatWasExpected() {
        assertMessage(List.of("linear"), "expected 2 arguments (kind and topology name), found 1");
        assertMessage(List.of("linear", "x", "-c", "a=b"), "expected 2 arguments");
        assertMessage(List.of("ring", "x"), "unknown topology kind 'ring'");
        assertMessage(List.of("linear", "a/b"), "Topology name");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Submit.Request.parse(List.of("wordcount", "wc"), Map.of("bench.parallelism.word", 2L)));
        assertTrue(e.getMessage().contains("[count, sentences, split]"), e.getMessage());
    }

    private static void assertMessage(List<String> args, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Submit.Request.parse(args, Map.of()));
        assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }
}
