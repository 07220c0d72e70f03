package io.schedulerpy.topologies;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Properties;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The per-tuple CPU of one component, changed while the topology runs through the control file
 * named by {@code bench.control.file} (topologies/README.md, "JVM topologies"): a Java properties
 * file on the worker's host whose {@code bench.cpu.micros.<component>}, else
 * {@code bench.cpu.micros}, replaces the value the topology was submitted with. The file is
 * looked at no more than once a second and read only when its modification time changed; while
 * it is missing, or names no value for the component, the submitted value holds. A malformed
 * value is logged once per change and ignored.
 */
final class CpuControl {
    private static final Logger LOG = LoggerFactory.getLogger(CpuControl.class);
    static final long CHECK_EVERY_NANOS = 1_000_000_000L;

    private final Path file;
    private final String component;
    private final long submittedMicros;
    private final LongSupplier clock;
    private long micros;
    private long nextCheck;
    private FileTime seen;

    CpuControl(Path file, String component, long submittedMicros) {
        this(file, component, submittedMicros, System::nanoTime);
    }

    CpuControl(Path file, String component, long submittedMicros, LongSupplier nanoClock) {
        this.file = file;
        this.component = component;
        this.submittedMicros = submittedMicros;
        this.micros = submittedMicros;
        this.clock = nanoClock;
        this.nextCheck = nanoClock.getAsLong();
    }

    /** The CPU (µs) to burn for the next tuple. */
    long micros() {
        long now = clock.getAsLong();
        if (now - nextCheck >= 0) {
            nextCheck = now + CHECK_EVERY_NANOS;
            reload();
        }
        return micros;
    }

    private void reload() {
        FileTime modified;
        try {
            modified = Files.getLastModifiedTime(file);
        } catch (NoSuchFileException e) {
            if (seen != null) {
                LOG.info("{}: control file {} is gone; back to the submitted {} us per tuple", component, file,
                         submittedMicros);
            }
            seen = null;
            micros = submittedMicros;
            return;
        } catch (IOException e) {
            return; // keep the current value; the next check tries again
        }
        if (modified.equals(seen)) {
            return;
        }
        seen = modified;
        Properties values = new Properties();
        try (Reader reader = Files.newBufferedReader(file)) {
            values.load(reader);
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("{}: cannot read control file {} ({}); keeping {} us per tuple", component, file, e, micros);
            return;
        }
        String own = BenchOptions.CPU_MICROS + "." + component;
        String key = values.containsKey(own) ? own : BenchOptions.CPU_MICROS;
        String raw = values.getProperty(key);
        if (raw == null) {
            micros = submittedMicros;
            return;
        }
        try {
            long value = Long.parseLong(raw.trim());
            if (value < 0 || value > BenchOptions.MAX_CPU_MICROS) {
                throw new NumberFormatException("out of range");
            }
            if (value != micros) {
                LOG.info("{}: {} us of CPU per tuple from control file {} (was {})", component, value, file, micros);
            }
            micros = value;
        } catch (NumberFormatException e) {
            LOG.warn("{}: control file {} has {}='{}', expected whole microseconds from 0 to {}; keeping {} us per tuple",
                     component, file, key, raw, BenchOptions.MAX_CPU_MICROS, micros);
        }
    }
}
