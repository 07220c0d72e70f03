package io.schedulerpy.topologies;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LatencyLogTest {
    @Test
    void bucketsAreFivePercentWideAndBounded() {
        assertEquals(0, LatencyLog.bucket(0));
        assertEquals(0, LatencyLog.bucket(1));
        int ms = LatencyLog.bucket(1000);
        assertEquals((int) Math.floor(Math.log(1000) * 20), ms);
        assertTrue(LatencyLog.bucket(1050) > ms, "5 % more lands in the next bucket");
        assertEquals(LatencyLog.BUCKETS - 1, LatencyLog.bucket(Long.MAX_VALUE / 1000));
    }

    @Test
    void writesTheCumulativeHistogramAtomically(@TempDir Path dir) throws Exception {
        LatencyLog log = new LatencyLog(dir, "wc-1-2", 3);
        log.record(2_000_000);    // 2 ms
        log.record(2_000_000);
        log.record(50_000_000);   // 50 ms
        log.write();
        String json = Files.readString(dir.resolve("wc-1-2-3.json"));
        assertTrue(json.startsWith("{\"task\":3,"), json);
        assertEquals(3, log.count());
        String counts = json.substring(json.indexOf('[') + 1, json.indexOf(']'));
        String[] cells = counts.split(",");
        assertEquals(LatencyLog.BUCKETS, cells.length);
        assertEquals("2", cells[LatencyLog.bucket(2000)]);
        assertEquals("1", cells[LatencyLog.bucket(50_000)]);
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary file is left behind");
        }
    }
}
