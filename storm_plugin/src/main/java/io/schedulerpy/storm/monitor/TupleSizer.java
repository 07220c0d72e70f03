package io.schedulerpy.storm.monitor;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.storm.serialization.KryoValuesSerializer;

/**
 * Size in bytes of an emitted tuple as Storm would put it on the wire between workers.
 *
 * <p>{@code KryoTupleSerializer} writes: the source task (Kryo var-int), the stream's numeric id
 * (var-int, one byte for fewer than 128 streams per component), the {@code MessageId} (a var-int
 * anchor count, then 16 bytes per anchor) and the values, serialized by a
 * {@link KryoValuesSerializer} built from the topology configuration (so registered serializers
 * and {@code topology.fall.back.on.java.serialization} apply). An emit hook sees the values but not
 * the anchors, so the size is: var-int(src task) + 1 + 1 (unanchored) + Kryo(values). Anchored
 * tuples of acking topologies are 16 bytes per anchor larger on the wire, and the 6-byte Netty
 * {@code TaskMessage} framing is not counted either.
 *
 * <p>If the Kryo serializer cannot be built, or a value cannot be serialized, a cheap estimate is
 * used instead ({@link #estimate}). One instance per task hook; {@link #size} is synchronized
 * because Kryo is not thread-safe (a ShellBolt task emits from its reader thread, metrics from the
 * executor thread).
 */
final class TupleSizer {
    private final Map<String, Object> conf;
    private final OnceLog problems;
    private KryoValuesSerializer kryo;
    private boolean kryoFailed;

    TupleSizer(Map<String, Object> conf, OnceLog problems) {
        this.conf = conf;
        this.problems = problems;
    }

    synchronized long size(int srcTask, List<Object> values) {
        long header = varIntLength(srcTask) + 1 + 1;
        if (!kryoFailed) {
            try {
                if (kryo == null) {
                    kryo = new KryoValuesSerializer(conf);
                }
                return header + kryo.serialize(values).length;
            } catch (Throwable t) {
                if (kryo == null) {
                    kryoFailed = true;
                    problems.warn("kryo-init", "scheduler-py monitor: cannot build the topology's Kryo serializer; "
                        + "tuple sizes are estimated", t);
                } else {
                    problems.warn("kryo-serialize", "scheduler-py monitor: a sampled tuple could not be serialized "
                        + "with Kryo; its size is estimated", t);
                }
            }
        }
        return header + estimate(values);
    }

    /** Length of Kryo's var-int encoding of {@code value} with optimizePositive = true. */
    static int varIntLength(int value) {
        if (value >>> 7 == 0) {
            return 1;
        }
        if (value >>> 14 == 0) {
            return 2;
        }
        if (value >>> 21 == 0) {
            return 3;
        }
        if (value >>> 28 == 0) {
            return 4;
        }
        return 5;
    }

    /** A cheap stand-in for Kryo's size of a value (roughly what Kryo writes for common types). */
    static long estimate(Object v) {
        if (v == null) {
            return 1;
        }
        if (v instanceof CharSequence) {
            CharSequence s = (CharSequence) v;
            return 1 + varIntLength(s.length()) + s.toString().getBytes(StandardCharsets.UTF_8).length;
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Character) {
            return 1 + 4;
        }
        if (v instanceof Long || v instanceof Double) {
            return 1 + 8;
        }
        if (v instanceof Float) {
            return 1 + 4;
        }
        if (v instanceof Boolean || v instanceof Byte) {
            return 1 + 1;
        }
        if (v instanceof byte[]) {
            int n = ((byte[]) v).length;
            return 1 + varIntLength(n + 1) + n;
        }
        if (v instanceof Collection) {
            long n = 1 + varIntLength(((Collection<?>) v).size());
            for (Object o : (Collection<?>) v) {
                n += estimate(o);
            }
            return n;
        }
        if (v instanceof Map) {
            long n = 1 + varIntLength(((Map<?, ?>) v).size());
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                n += estimate(e.getKey()) + estimate(e.getValue());
            }
            return n;
        }
        return 16;
    }
}
