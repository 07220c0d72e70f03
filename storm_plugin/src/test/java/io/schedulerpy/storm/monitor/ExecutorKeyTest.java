package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class ExecutorKeyTest {
    @Test
    void parsesStormExecutorThreadNames() {
        // Executor.execute(): componentId + "-executor" + List<Long>.toString(), appended by Utils.asyncLoop
        assertEquals(new ExecutorKey(4, 4, "count"), ExecutorKey.fromThreadName("Thread-17-count-executor[4, 4]"));
        assertEquals(new ExecutorKey(5, 7, "split-words"), ExecutorKey.fromThreadName("Thread-3-split-words-executor[5, 7]"));
        assertEquals(new ExecutorKey(-1, -1, "__system"), ExecutorKey.fromThreadName("Thread-9-__system-executor[-1, -1]"));
        assertEquals(new ExecutorKey(1, 1, "__acker"), ExecutorKey.fromThreadName("Thread-22-__acker-executor[1 1]"));
        assertEquals(new ExecutorKey(2, 2, "__metricsorg.apache.storm.metric.LoggingMetricsConsumer"),
            ExecutorKey.fromThreadName("Thread-8-__metricsorg.apache.storm.metric.LoggingMetricsConsumer-executor[2, 2]"));
        assertEquals(new ExecutorKey(3, 3, "c"), ExecutorKey.fromThreadName("c-executor[3,3]"));
    }

    @Test
    void otherThreadsAreNotExecutors() {
        assertNull(ExecutorKey.fromThreadName("Thread-5"));
        assertNull(ExecutorKey.fromThreadName("main"));
        assertNull(ExecutorKey.fromThreadName("Thread-12-worker-transfer-queue"));
        assertNull(ExecutorKey.fromThreadName("Thread-1-count-executor[4, x]"));
        assertNull(ExecutorKey.fromThreadName(null));
    }

    @Test
    void orderAndContains() {
        TreeSet<ExecutorKey> s = new TreeSet<>(List.of(new ExecutorKey(5, 5, "b"), new ExecutorKey(-1, -1, "__system"),
            new ExecutorKey(1, 3, "a")));
        assertEquals(List.of(-1, 1, 5), s.stream().map(ExecutorKey::start).toList());
        assertTrue(new ExecutorKey(1, 3, "a").contains(2));
        assertFalse(new ExecutorKey(1, 3, "a").contains(4));
    }

    @Test
    void workerViewKeepsOnlyThisWorkersExecutors() {
        WorkerView v = new WorkerView(List.of(-1, 1, 4), Map.of(-1, "__system", 1, "__acker", 4, "count", 5, "count"), Map.of());
        assertTrue(v.isLocal(new ExecutorKey(4, 4, "count")));
        assertTrue(v.isLocal(new ExecutorKey(-1, -1, "__system")));
        assertFalse(v.isLocal(new ExecutorKey(5, 5, "count")), "task 5 runs in another worker");
        assertFalse(v.isLocal(new ExecutorKey(4, 4, "split")), "task 4 is not split's");
    }

    @Test
    void shellCommandMatchesInterpreterCommandLines() {
        WorkerView.ShellCommand c = new WorkerView.ShellCommand("streamparse_run", "bolts.split.SplitSentenceBolt");
        assertTrue(c.matches(List.of("/v/bin/python3", "/v/bin/streamparse_run", "bolts.split.SplitSentenceBolt")));
        assertTrue(c.matches(List.of("streamparse_run", "bolts.split.SplitSentenceBolt")));
        assertFalse(c.matches(List.of("/v/bin/python3", "/v/bin/streamparse_run", "bolts.count.WordCountBolt")));
        assertFalse(c.matches(List.of("python3", "bolts.split.SplitSentenceBolt")));
        assertFalse(c.matches(List.of()));
    }
}
