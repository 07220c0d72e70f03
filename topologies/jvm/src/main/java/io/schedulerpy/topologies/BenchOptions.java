package io.schedulerpy.topologies;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code bench.*} options of a benchmark topology, read from its topology conf (what
 * {@code storm jar ... -c key=value} sets), validated, with per-component overrides: for the
 * per-component options, {@code bench.cpu.micros.bolt_1=200} overrides {@code bench.cpu.micros}
 * for component {@code bolt_1} only. Every option is documented in topologies/README.md
 * ("JVM topologies").
 *
 * <p>Unknown {@code bench.*} keys and overrides naming a component the topology does not have
 * are errors, so a typo cannot silently run the default.
 */
public final class BenchOptions {
    public static final String PAYLOAD_BYTES = "bench.payload.bytes";
    public static final String SPOUT_RATE = "bench.spout.rate";
    public static final String PARALLELISM = "bench.parallelism";
    public static final String CPU_MICROS = "bench.cpu.micros";
    public static final String CPU_LOAD = "bench.cpu.load";
    public static final String MEMORY_MB = "bench.memory.mb";
    /** Directory the spouts write their complete-latency histograms to ({@link LatencyLog}); unset = off. */
    public static final String LATENCY_DIR = "bench.latency.dir";
    /** A file on the workers' hosts whose {@code bench.cpu.micros[.component]} changes the bolts' CPU at run time ({@link CpuControl}); unset = off. */
    public static final String CONTROL_FILE = "bench.control.file";

    public static final int DEFAULT_PAYLOAD_BYTES = 1024;
    public static final int MAX_PAYLOAD_BYTES = 1 << 20;
    public static final int MAX_PARALLELISM = 1000;
    public static final long MAX_CPU_MICROS = 10_000_000L;
    /** Storm's default on-heap memory per executor (topology.component.resources.onheap.memory.mb). */
    public static final double DEFAULT_MEMORY_MB = 128.0;

    private static final String PREFIX = "bench.";
    private static final List<String> TOPOLOGY_KEYS = List.of(PAYLOAD_BYTES, SPOUT_RATE, LATENCY_DIR, CONTROL_FILE);
    private static final List<String> COMPONENT_KEYS = List.of(PARALLELISM, CPU_MICROS, CPU_LOAD, MEMORY_MB);

    private final Map<String, Object> conf;
    private final Set<String> components;

    /**
     * @param conf       the topology conf ({@code bench.*} keys among others)
     * @param components the component ids of the topology, for per-component overrides
     * @throws IllegalArgumentException naming the first unknown or malformed option
     */
    public BenchOptions(Map<String, Object> conf, Collection<String> components) {
        this.conf = conf;
        this.components = new TreeSet<>(components);
        for (String key : new TreeSet<>(conf.keySet())) {
            if (key.startsWith(PREFIX)) {
                checkKnown(key);
            }
        }
        payloadBytes();
        spoutRate();
        for (String component : this.components) {
            parallelism(component, 1);
            cpuMicros(component);
            cpuLoad(component, 1.0);
            memoryMb(component);
        }
    }

    /** Bytes of payload every tuple of Linear, Diamond and Star carries (not word count). */
    public int payloadBytes() {
        return (int) integer(PAYLOAD_BYTES, DEFAULT_PAYLOAD_BYTES, 1, MAX_PAYLOAD_BYTES);
    }

    /** New tuples per second per spout executor; 0 means as fast as Storm asks (unthrottled). */
    public double spoutRate() {
        return number(SPOUT_RATE, 0.0, 0.0, 1e9);
    }

    /** Where the spouts write complete-latency histograms, or null when they do not. */
    public String latencyDir() {
        Object raw = conf.get(LATENCY_DIR);
        if (raw == null || raw.toString().isBlank()) {
            return null;
        }
        return raw.toString();
    }

    /** Executors of {@code component}. */
    public int parallelism(String component, int defaultValue) {
        return (int) integer(componentKey(PARALLELISM, component), integer(PARALLELISM, defaultValue, 1, MAX_PARALLELISM),
                             1, MAX_PARALLELISM);
    }

    /** Thread CPU time {@code component} burns per tuple (a spout per emitted tuple, a bolt per input tuple). */
    public long cpuMicros(String component) {
        return integer(componentKey(CPU_MICROS, component), integer(CPU_MICROS, 0, 0, MAX_CPU_MICROS), 0, MAX_CPU_MICROS);
    }

    /** CPU points (100 = one core) {@code component} declares per executor, for resource-aware schedulers. */
    public double cpuLoad(String component, double defaultValue) {
        return number(componentKey(CPU_LOAD, component), number(CPU_LOAD, defaultValue, 0.0, 10_000.0), 0.0, 10_000.0);
    }

    /** On-heap MB {@code component} declares per executor, for resource-aware schedulers. */
    public double memoryMb(String component) {
        return number(componentKey(MEMORY_MB, component), number(MEMORY_MB, DEFAULT_MEMORY_MB, 1.0, 1e6), 1.0, 1e6);
    }

    private static String componentKey(String key, String component) {
        return key + "." + component;
    }

    private void checkKnown(String key) {
        if (TOPOLOGY_KEYS.contains(key) || COMPONENT_KEYS.contains(key)) {
            return;
        }
        for (String base : COMPONENT_KEYS) {
            if (key.startsWith(base + ".")) {
                String component = key.substring(base.length() + 1);
                if (components.contains(component)) {
                    return;
                }
                throw new IllegalArgumentException(
                    "option " + key + " names component '" + component + "', which this topology does not have;"
                        + " expected one of " + components);
            }
        }
        throw new IllegalArgumentException(
            "unknown option " + key + ": expected one of " + TOPOLOGY_KEYS + ", " + COMPONENT_KEYS
                + " or <" + String.join("|", COMPONENT_KEYS) + ">.<component> with a component of " + components);
    }

    private long integer(String key, long defaultValue, long min, long max) {
        Object raw = conf.get(key);
        if (raw == null) {
            return defaultValue;
        }
        double value = toNumber(key, raw, "an integer");
        if (value != Math.rint(value)) {
            throw new IllegalArgumentException(key + ": expected an integer, found " + describe(raw));
        }
        return (long) checkRange(key, value, min, max, raw);
    }

    private double number(String key, double defaultValue, double min, double max) {
        Object raw = conf.get(key);
        if (raw == null) {
            return defaultValue;
        }
        return checkRange(key, toNumber(key, raw, "a number"), min, max, raw);
    }

    private static double toNumber(String key, Object raw, String expected) {
        if (raw instanceof Number) {
            return ((Number) raw).doubleValue();
        }
        if (raw instanceof String) {
            try {
                return Double.parseDouble(((String) raw).trim());
            } catch (NumberFormatException e) {
                // reported below
            }
        }
        throw new IllegalArgumentException(key + ": expected " + expected + ", found " + describe(raw));
    }

    private static double checkRange(String key, double value, double min, double max, Object raw) {
        if (Double.isNaN(value) || value < min || value > max) {
            throw new IllegalArgumentException(
                key + ": expected a value from " + format(min) + " to " + format(max) + ", found " + describe(raw));
        }
        return value;
    }

    private static String format(double value) {
        return value == Math.rint(value) && Math.abs(value) < 1e15 ? Long.toString((long) value) : Double.toString(value);
    }

    private static String describe(Object raw) {
        return "'" + raw + "' (" + raw.getClass().getSimpleName() + ")";
    }
}
