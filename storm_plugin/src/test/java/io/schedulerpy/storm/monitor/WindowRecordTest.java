package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WindowRecordTest {
    static WindowRecord sample() {
        return new WindowRecord("wordcount-1-1795250648", "8a1f-\"x\"", "127.0.0.2", 6710, 17,
            1_795_250_700_000L, 1_795_250_710_000L, 812.0, 240.5,
            List.of(new WindowRecord.ExecutorCpu(new ExecutorKey(4, 4, "count"), 35.2, 410.7, List.of(23117L)),
                new WindowRecord.ExecutorCpu(new ExecutorKey(-1, -1, "__system"), 0.0004, 0, List.of())),
            List.of(new TrafficCounters.Entry(9, 4, "default", 1200, 96000),
                new TrafficCounters.Entry(2, 1, "__ack_init", 3, 60)), -1);
    }

    @Test
    void jsonHasTheContractsShape() {
        String json = sample().toJson();
        assertFalse(json.contains("\n"), "one line per record");
        Map<String, Object> r = MiniJson.object(json);
        assertEquals(List.of("v", "topology_id", "supervisor_id", "host", "port", "seq", "window_start_ms",
            "window_end_ms", "worker_cpu_ms", "overhead_cpu_ms", "executors", "traffic"), new ArrayList<>(r.keySet()));
        assertEquals(1L, r.get("v"));
        assertEquals("wordcount-1-1795250648", r.get("topology_id"));
        assertEquals("8a1f-\"x\"", r.get("supervisor_id"));
        assertEquals("127.0.0.2", r.get("host"));
        assertEquals(6710L, r.get("port"));
        assertEquals(17L, r.get("seq"));
        assertEquals(1_795_250_700_000L, r.get("window_start_ms"));
        assertEquals(1_795_250_710_000L, r.get("window_end_ms"));
        assertEquals(812.0, r.get("worker_cpu_ms"));
        assertEquals(240.5, r.get("overhead_cpu_ms"));

        @SuppressWarnings("unchecked")
        List<Map<String, Object>> ex = (List<Map<String, Object>>) r.get("executors");
        assertEquals(2, ex.size());
        assertEquals(List.of("task_start", "task_end", "component", "thread_cpu_ms", "subprocess_cpu_ms",
            "subprocess_pids"), new ArrayList<>(ex.get(0).keySet()));
        assertEquals(-1L, ex.get(0).get("task_start"), "sorted by task range");
        assertEquals(0.0, ex.get(0).get("thread_cpu_ms"));
        assertEquals(List.of(), ex.get(0).get("subprocess_pids"));
        assertEquals("count", ex.get(1).get("component"));
        assertEquals(35.2, ex.get(1).get("thread_cpu_ms"));
        assertEquals(410.7, ex.get(1).get("subprocess_cpu_ms"));
        assertEquals(List.of(23117L), ex.get(1).get("subprocess_pids"));

        @SuppressWarnings("unchecked")
        List<Map<String, Object>> tr = (List<Map<String, Object>>) r.get("traffic");
        assertEquals(List.of("src", "dst", "stream", "tuples", "bytes"), new ArrayList<>(tr.get(0).keySet()));
        assertEquals(Map.of("src", 2L, "dst", 1L, "stream", "__ack_init", "tuples", 3L, "bytes", 60L), tr.get(0));
        assertEquals(Map.of("src", 9L, "dst", 4L, "stream", "default", "tuples", 1200L, "bytes", 96000L), tr.get(1));
    }

    @Test
    void cpuValuesAreFiniteNonNegativeDecimals() {
        assertEquals("0.0", WindowRecord.ms(0));
        assertEquals("0.0", WindowRecord.ms(-3));
        assertEquals("0.0", WindowRecord.ms(Double.NaN));
        assertEquals("0.0", WindowRecord.ms(0.0004));
        assertEquals("0.001", WindowRecord.ms(0.0005));
        assertEquals("12.0", WindowRecord.ms(12));
        assertEquals("12345678.9", WindowRecord.ms(12345678.9));
        assertEquals("1.235", WindowRecord.ms(1.23456));
    }

    @Test
    void bigRecordsKeepTheirTopPairsForZooKeeper() {
        List<TrafficCounters.Entry> traffic = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            traffic.add(new TrafficCounters.Entry(i % 100, i / 100, "stream-" + (i % 7), 1 + i, 10L * i));
        }
        WindowRecord r = new WindowRecord("t", "s", "h", 1, 0, 0, 10_000, 1, 0, List.of(), traffic, -1);
        String full = r.toJson();
        assertTrue(WindowRecord.utf8Length(full) > 1_000_000);
        assertEquals(full, r.toJsonWithin(10_000_000), "small enough: unchanged");

        String cut = r.toJsonWithin(512 * 1024);
        assertTrue(WindowRecord.utf8Length(cut) <= 512 * 1024);
        Map<String, Object> m = MiniJson.object(cut);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> kept = (List<Map<String, Object>>) m.get("traffic");
        long truncated = (Long) m.get("truncated_pairs");
        assertEquals(20_000, kept.size() + truncated);
        assertTrue(kept.size() > 1000, "kept " + kept.size());
        long minKept = kept.stream().mapToLong(x -> (Long) x.get("tuples")).min().getAsLong();
        assertEquals(20_000 - kept.size() + 1, minKept, "the pairs with the most tuples are kept");
    }
}
