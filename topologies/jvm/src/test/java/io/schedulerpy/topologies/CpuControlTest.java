package io.schedulerpy.topologies;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CpuControlTest {
    @TempDir
    Path dir;

    private final AtomicLong clock = new AtomicLong(0);

    private void write(Path file, String text, long modifiedSeconds) throws IOException {
        Files.writeString(file, text);
        Files.setLastModifiedTime(file, FileTime.fromMillis(modifiedSeconds * 1000));
    }

    private void tick() {
        clock.addAndGet(CpuControl.CHECK_EVERY_NANOS);
    }

    @Test
    void followsTheFileForItsComponentAndFallsBackToTheSubmittedValue() throws IOException {
        Path file = dir.resolve("control.properties");
        CpuControl split = new CpuControl(file, "split", 80_000, clock::get);
        assertEquals(80_000, split.micros(), "no file yet: the submitted value");
        write(file, "bench.cpu.micros.split=0\nbench.cpu.micros=500\n", 1);
        assertEquals(80_000, split.micros(), "within a second of the last look: not read again");
        tick();
        assertEquals(0, split.micros(), "the component's own key wins");
        CpuControl count = new CpuControl(file, "count", 7, clock::get);
        assertEquals(500, count.micros(), "no key of its own: bench.cpu.micros");
        write(file, "bench.cpu.micros.count=3\n", 2);
        tick();
        assertEquals(80_000, split.micros(), "no key for it any more: the submitted value");
        assertEquals(3, count.micros());
        Files.delete(file);
        tick();
        assertEquals(7, count.micros(), "file gone: the submitted value");
    }

    @Test
    void keepsTheCurrentValueWhenTheFileHoldsGarbage() throws IOException {
        Path file = dir.resolve("control.properties");
        write(file, "bench.cpu.micros.split=100\n", 1);
        CpuControl split = new CpuControl(file, "split", 80_000, clock::get);
        assertEquals(100, split.micros());
        write(file, "bench.cpu.micros.split=fast\n", 2);
        tick();
        assertEquals(100, split.micros(), "not a number: ignored");
        write(file, "bench.cpu.micros.split=-5\n", 3);
        tick();
        assertEquals(100, split.micros(), "negative: ignored");
        write(file, "bench.cpu.micros.split=250\n", 4);
        tick();
        assertEquals(250, split.micros());
    }
}
