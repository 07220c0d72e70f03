package io.schedulerpy.storm.monitor;

import com.codahale.metrics.Gauge;
import java.lang.reflect.Field;
import java.util.IdentityHashMap;
import java.util.Map;
import org.apache.storm.shade.org.jctools.queues.QueueProgressIndicators;

/**
 * Exact, free counts of the tuples that entered and left an executor's queues. Storm registers
 * per task the gauges of its executor's receive queue ({@code JCQueueMetrics}:
 * {@code receive-queue-population}, {@code receive-queue-overflow}, ...; the worker's transfer queue
 * as task -1: {@code worker-transfer-queue-*}); each gauge is an object that holds the JCTools queue
 * it reads. This class finds that queue in the gauge's fields (once per gauge) and reads its
 * producer and consumer indices: JCTools keeps them anyway, so reading them costs the tuples
 * nothing. Storm keeps no other exact per-tuple count when {@code topology.stats.sample.rate} &lt; 1.
 * If a future Storm's gauges hold no such field, {@link #queueOf} returns null and the caller falls
 * back to the gauges' values (population only).
 */
final class QueueProbe {
    private final Map<Object, QueueProgressIndicators> found = new IdentityHashMap<>();

    /** The JCTools queue a Storm queue gauge reads, or null when it holds none. */
    QueueProgressIndicators queueOf(Gauge<?> gauge) {
        if (gauge == null) {
            return null;
        }
        if (found.containsKey(gauge)) {
            return found.get(gauge);
        }
        QueueProgressIndicators q = null;
        try {
            for (Field f : gauge.getClass().getDeclaredFields()) {
                if (!f.getType().isPrimitive()) {
                    f.setAccessible(true);
                    Object v = f.get(gauge);
                    if (v instanceof QueueProgressIndicators) {
                        q = (QueueProgressIndicators) v;
                        break;
                    }
                }
            }
        } catch (RuntimeException | IllegalAccessException e) {
            q = null;
        }
        found.put(gauge, q);
        return q;
    }

    /** Number of items in a queue (producer − consumer index), never negative. */
    static long size(QueueProgressIndicators q) {
        return Math.max(0, q.currentProducerIndex() - q.currentConsumerIndex());
    }
}
