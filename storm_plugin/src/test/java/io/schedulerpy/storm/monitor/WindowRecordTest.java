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

    @Test
    void version2CarriesStormsCountsAndTheRoutes() {
        WindowRecord.Counts counts = new WindowRecord.Counts("counts", 0.05, true,
            List.of(TaskCounts.of(9, "spout", Map.of("__emit-count-default", 2400L, "__ack-count-default", 10L),
                    Map.of()),
                TaskCounts.of(4, "split", Map.of("__execute-count-spout:default", 1200L,
                    "__transfer-count-default", 2400L), Map.of("spout:default", 0.031))),
            List.of(new TopologyRoutes.Route("split", "default", "count", "fields", List.of("word")),
                new TopologyRoutes.Route("spout", "default", "split", "shuffle", List.of())),
            Map.of(), 3);
        WindowRecord base = sample();
        List<WindowRecord.ExecutorCpu> executors = new ArrayList<>(base.executors);
        executors.add(new WindowRecord.ExecutorCpu(new ExecutorKey(9, 9, "spout"), 12.0, 0, List.of()));
        WindowRecord r = new WindowRecord(base.topologyId, base.supervisorId, base.host, base.port, base.seq,
            base.windowStartMs, base.windowEndMs, base.workerCpuMs, base.overheadCpuMs, executors, List.of(), -1,
            counts);
        Map<String, Object> j = MiniJson.object(r.toJson());
        assertEquals(List.of("v", "topology_id", "supervisor_id", "host", "port", "seq", "window_start_ms",
            "window_end_ms", "worker_cpu_ms", "overhead_cpu_ms", "mode", "sample_rate", "load_aware_messaging",
            "executors", "task_counts", "routes", "reset_counters", "traffic"), new ArrayList<>(j.keySet()));
        assertEquals(2L, j.get("v"));
        assertEquals("counts", j.get("mode"));
        assertEquals(0.05, j.get("sample_rate"));
        assertEquals(true, j.get("load_aware_messaging"));
        assertEquals(3L, j.get("reset_counters"));
        assertEquals(List.of(), j.get("traffic"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> tc = (List<Map<String, Object>>) j.get("task_counts");
        assertEquals(4L, tc.get(0).get("task"), "sorted by task");
        assertEquals(List.of("task", "component", "emitted", "transferred", "executed", "execute_ms", "acked",
            "failed"), new ArrayList<>(tc.get(0).keySet()));
        assertEquals(Map.of("spout:default", 1200L), tc.get(0).get("executed"));
        assertEquals(Map.of("default", 2400L), tc.get(0).get("transferred"));
        assertEquals(Map.of("spout:default", 0.031), tc.get(0).get("execute_ms"));
        assertEquals(Map.of("default", 2400L), tc.get(1).get("emitted"));
        assertEquals(Map.of("default", 10L), tc.get(1).get("acked"));
        assertEquals(Map.of(), tc.get(1).get("failed"));
        assertFalse(tc.get(1).containsKey("execute_ms"), "absent when unknown");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> routes = (List<Map<String, Object>>) j.get("routes");
        assertEquals(Map.of("component", "split", "stream", "default", "target", "count", "grouping", "fields",
            "fields", List.of("word")), routes.get(0));
        assertEquals(Map.of("component", "spout", "stream", "default", "target", "split", "grouping", "shuffle"),
            routes.get(1));
    }

    @Test
    void exactModeCarriesTupleBytesAndStaysVersion2WhenTruncated() {
        WindowRecord.Counts counts = new WindowRecord.Counts("exact", 1.0, false, List.of(), List.of(),
            Map.of("split:default", 80.0), 0);
        List<TrafficCounters.Entry> traffic = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            traffic.add(new TrafficCounters.Entry(i, i + 1, "default", i + 1, 80L * (i + 1)));
        }
        WindowRecord r = new WindowRecord("t", "s", "h", 1, 0, 0, 10_000, 1, 0, List.of(), traffic, -1, counts);
        Map<String, Object> j = MiniJson.object(r.toJsonWithin(20_000));
        assertEquals(2L, j.get("v"));
        assertEquals("exact", j.get("mode"));
        assertEquals(1.0, j.get("sample_rate"));
        assertEquals(false, j.get("load_aware_messaging"));
        assertEquals(Map.of("split:default", 80.0), j.get("tuple_bytes"));
        assertTrue(((Number) j.get("truncated_pairs")).longValue() > 0);
    }

    @Test
    void nettyCountsFollowResetCountersAndAreLeftOutWhenUnknown() {
        List<WindowRecord.ExecutorCpu> running = List.of(
            new WindowRecord.ExecutorCpu(new ExecutorKey(4, 4, "split"), 1.0, 0, List.of()));
        WindowRecord.Counts both = new WindowRecord.Counts("counts", 0.05, true,
            List.of(TaskCounts.of(4, "split", Map.of(), Map.of())), List.of(), Map.of(), 0, 52_000, 4_680_000);
        WindowRecord r = new WindowRecord("t", "s", "h", 1, 0, 0, 10_000, 1, 0, running, List.of(), -1, both);
        Map<String, Object> j = MiniJson.object(r.toJson());
        assertEquals(List.of("v", "topology_id", "supervisor_id", "host", "port", "seq", "window_start_ms",
            "window_end_ms", "worker_cpu_ms", "overhead_cpu_ms", "mode", "sample_rate", "load_aware_messaging",
            "executors", "task_counts", "routes", "reset_counters", "netty_sent_messages", "netty_written_bytes",
            "traffic"), new ArrayList<>(j.keySet()));
        assertEquals(52_000L, j.get("netty_sent_messages"));
        assertEquals(4_680_000L, j.get("netty_written_bytes"));
        assertEquals(52_000, r.counts.nettySentMessages(), "kept when the task counts are cut to the executors");

        WindowRecord.Counts zero = new WindowRecord.Counts("exact", 1.0, true, List.of(), List.of(), Map.of(), 0, 0, 0);
        Map<String, Object> z = MiniJson.object(
            new WindowRecord("t", "s", "h", 1, 0, 0, 10_000, 1, 0, running, List.of(), -1, zero).toJson());
        assertEquals(0L, z.get("netty_sent_messages"), "0 is a value");
        assertEquals(0L, z.get("netty_written_bytes"));

        WindowRecord.Counts bytesOnly = new WindowRecord.Counts("counts", 0.05, true, List.of(), List.of(), Map.of(),
            0, -1, 900);
        Map<String, Object> b = MiniJson.object(
            new WindowRecord("t", "s", "h", 1, 0, 0, 10_000, 1, 0, running, List.of(), -1, bytesOnly).toJson());
        assertFalse(b.containsKey("netty_sent_messages"), "unknown: left out");
        assertEquals(900L, b.get("netty_written_bytes"));

        WindowRecord.Counts neither = new WindowRecord.Counts("counts", 0.05, true, List.of(), List.of(), Map.of(), 0);
        Map<String, Object> n = MiniJson.object(
            new WindowRecord("t", "s", "h", 1, 0, 0, 10_000, 1, 0, running, List.of(), -1, neither).toJson());
        assertFalse(n.containsKey("netty_sent_messages"));
        assertFalse(n.containsKey("netty_written_bytes"));
        assertEquals(-1, new WindowRecord.Counts("counts", 0.05, true, List.of(), List.of(), Map.of(), 0, -7, -2)
            .nettyWrittenBytes(), "any negative means unknown");

        List<TrafficCounters.Entry> traffic = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            traffic.add(new TrafficCounters.Entry(i, i + 1, "default", i + 1, 80L * (i + 1)));
        }
        Map<String, Object> cut = MiniJson.object(
            new WindowRecord("t", "s", "h", 1, 0, 0, 10_000, 1, 0, running, traffic, -1, both).toJsonWithin(20_000));
        assertTrue(((Number) cut.get("truncated_pairs")).longValue() > 0);
        assertEquals(52_000L, cut.get("netty_sent_messages"), "kept in a record cut for ZooKeeper");
        assertEquals(4_680_000L, cut.get("netty_written_bytes"));
    }

    @Test
    void taskCountsOfTasksWithoutARunningExecutorAreLeftOut() {
        // at start-up and shutdown Storm's registry names tasks whose executor threads are not running
        WindowRecord.Counts counts = new WindowRecord.Counts("counts", 0.05, true,
            List.of(TaskCounts.of(-1, "__system", Map.of("__emit-count-__metrics", 3L), Map.of()),
                TaskCounts.of(5, "count", Map.of("__execute-count-split:default", 40L), Map.of()),
                TaskCounts.of(7, "count", Map.of(), Map.of())),
            List.of(), Map.of(), 0);
        List<WindowRecord.ExecutorCpu> running = List.of(
            new WindowRecord.ExecutorCpu(new ExecutorKey(4, 7, "count"), 1.0, 0, List.of()));
        WindowRecord some = new WindowRecord("t", "s", "h", 1, 0, 0, 10_000, 1, 0, running, List.of(), -1, counts);
        assertEquals(List.of(5, 7), some.counts.taskCounts().stream().map(TaskCounts::task).toList());

        WindowRecord none = new WindowRecord("t", "s", "h", 1, 0, 0, 10_000, 1, 0, List.of(), List.of(), -1, counts);
        @SuppressWarnings("unchecked")
        List<Object> listed = (List<Object>) MiniJson.object(none.toJson()).get("task_counts");
        assertEquals(List.of(), listed, "no executor running: no task counts, not the system task alone");
    }
}
