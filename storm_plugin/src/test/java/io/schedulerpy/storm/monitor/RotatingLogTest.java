package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RotatingLogTest {
    @TempDir
    Path dir;

    @Test
    void appendsLinesAndCreatesDirectories() throws Exception {
        Path f = dir.resolve("a/b/m.jsonl");
        RotatingLog log = new RotatingLog(f, 1000, 3);
        log.append("{\"seq\": 0}");
        log.append("{\"seq\": 1}");
        assertEquals(List.of("{\"seq\": 0}", "{\"seq\": 1}"), Files.readAllLines(f));
    }

    @Test
    void rotatesKeepingThreeOldFiles() throws Exception {
        Path f = dir.resolve("m.jsonl");
        RotatingLog log = new RotatingLog(f, 100, 3);
        String line = "x".repeat(39);                       // 40 bytes with the newline: 2 lines per file
        for (int i = 0; i < 11; i++) {
            log.append(line.substring(0, 37) + String.format("%02d", i));
        }
        // files hold lines [10], [8,9], [6,7], [4,5]; [0..3] were rotated out
        assertEquals(List.of(tail(10)), Files.readAllLines(f));
        assertEquals(List.of(tail(8), tail(9)), Files.readAllLines(log.numbered(1)));
        assertEquals(List.of(tail(6), tail(7)), Files.readAllLines(log.numbered(2)));
        assertEquals(List.of(tail(4), tail(5)), Files.readAllLines(log.numbered(3)));
        assertFalse(Files.exists(log.numbered(4)));
        for (Path p : List.of(f, log.numbered(1), log.numbered(2), log.numbered(3))) {
            assertTrue(Files.size(p) <= 100);
        }
    }

    @Test
    void aLineLargerThanTheLimitStillGetsWritten() throws Exception {
        Path f = dir.resolve("m.jsonl");
        RotatingLog log = new RotatingLog(f, 10, 3);
        log.append("y".repeat(50));
        log.append("z".repeat(50));
        assertEquals(List.of("z".repeat(50)), Files.readAllLines(f));
        assertEquals(List.of("y".repeat(50)), Files.readAllLines(log.numbered(1)));
    }

    @Test
    void recreatesADeletedFile() throws Exception {
        Path f = dir.resolve("m.jsonl");
        RotatingLog log = new RotatingLog(f, 1000, 3);
        log.append("a");
        Files.delete(f);
        log.append("b");
        assertEquals(List.of("b"), Files.readAllLines(f));
    }

    private static String tail(int i) {
        return "x".repeat(37) + String.format("%02d", i);
    }
}
