package io.schedulerpy.topologies;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * A spout executor's complete latencies (emit to ack, per tuple tree) as a cumulative histogram,
 * written as JSON to {@code <dir>/<topology-id>-<task>.json} about once a second, so a benchmark
 * can take two snapshots and compute percentiles over the interval between them (Storm itself
 * reports only the mean). Buckets are logarithmic: bucket {@code i} holds latencies in
 * [{@code e^(i/20)}, {@code e^((i+1)/20)}) microseconds, about 5 % wide, up to 100 s. The file is
 * replaced atomically (write, then rename), so a reader never sees half of one.
 *
 * <p>Format: {@code {"task": 3, "written_ms": ..., "per_unit": 20, "counts": [..]}}. Used by the
 * {@code monitor_overhead} benchmark (scheduler_py/bench/monitor_overhead.py). Single-threaded, like
 * the spout callbacks that feed it.
 */
final class LatencyLog {
    static final int PER_UNIT = 20;
    static final int BUCKETS = (int) Math.ceil(Math.log(100e6) * PER_UNIT) + 1;
    static final long WRITE_EVERY_NANOS = 1_000_000_000L;

    private final long[] counts = new long[BUCKETS];
    private final Path file;
    private final Path temporary;
    private final int task;
    private long lastWrite;
    private boolean failed;

    LatencyLog(Path directory, String topologyId, int task) {
        this.file = directory.resolve(topologyId + "-" + task + ".json");
        this.temporary = directory.resolve("." + topologyId + "-" + task + ".json.tmp");
        this.task = task;
    }

    static int bucket(long micros) {
        if (micros < 1) {
            return 0;
        }
        return (int) Math.min(BUCKETS - 1, Math.floor(Math.log(micros) * PER_UNIT));
    }

    void record(long nanos) {
        counts[bucket(nanos / 1000)]++;
    }

    long count() {
        long n = 0;
        for (long c : counts) {
            n += c;
        }
        return n;
    }

    /** Writes the histogram if a second has passed since the last write. */
    void maybeWrite(long nowNanos) {
        if (nowNanos - lastWrite >= WRITE_EVERY_NANOS) {
            lastWrite = nowNanos;
            write();
        }
    }

    String json() {
        StringBuilder out = new StringBuilder(BUCKETS * 3 + 80);
        out.append("{\"task\":").append(task).append(",\"written_ms\":").append(System.currentTimeMillis())
            .append(",\"per_unit\":").append(PER_UNIT).append(",\"counts\":[");
        for (int i = 0; i < BUCKETS; i++) {
            out.append(i == 0 ? "" : ",").append(counts[i]);
        }
        return out.append("]}").toString();
    }

    void write() {
        if (failed) {
            return;
        }
        try {
            Files.createDirectories(file.getParent());
            Files.write(temporary, json().getBytes(StandardCharsets.UTF_8));
            Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            failed = true;   // a benchmark aid: never disturb the topology; the reader notices the missing file
        }
    }
}
