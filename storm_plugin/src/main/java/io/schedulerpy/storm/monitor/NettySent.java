package io.schedulerpy.storm.monitor;

import com.codahale.metrics.Gauge;
import java.util.HashMap;
import java.util.Map;

/**
 * Messages the worker's Netty clients sent to other workers in a window ({@code netty_sent_messages},
 * {@code docs/monitoring-format.md} §1.1): the growth of the sum of Storm's
 * {@code __send-iconnection-sent-<host>:<port>} gauges (storm-client {@code messaging/netty/Client.java},
 * {@code messagesSent}: one per {@code TaskMessage} of a batch whose write completed), computed per
 * gauge name:
 * <ul>
 *   <li>a name seen at the previous call, same gauge: its increase. Storm's counter is an
 *       {@code AtomicInteger}; one that went down wrapped past 2<sup>31</sup> (the value is read unsigned)
 *       and counts modulo 2<sup>32</sup>;</li>
 *   <li>a new name, or a new gauge under a known name (a new {@code Client} for the same destination
 *       after a reconnection re-registers the name): its whole value;</li>
 *   <li>a value that went down and is no 32-bit counter (a reset): its new value;</li>
 *   <li>a name no longer registered: nothing (it is forgotten).</li>
 * </ul>
 * The first call only records a baseline. Single-threaded (the monitor's window thread).
 */
final class NettySent {
    private static final long WRAP = 1L << 32;

    /**
     * One gauge read now: the gauge object (a new {@code Client} registers a new one), its value, and
     * whether it is a 32-bit counter (read unsigned, so that it wraps from 2<sup>32</sup>−1 to 0).
     */
    record Reading(Object gauge, long value, boolean int32) {
        /** {@code gauge}'s value now, or null when it is no number or negative. */
        static Reading of(Gauge<?> gauge) {
            Object v;
            try {
                v = gauge == null ? null : gauge.getValue();
            } catch (RuntimeException e) {
                return null;
            }
            if (v instanceof Integer) {
                return new Reading(gauge, Integer.toUnsignedLong((Integer) v), true);
            }
            if (v instanceof Long || v instanceof Short || v instanceof Byte) {
                long l = ((Number) v).longValue();
                return l < 0 ? null : new Reading(gauge, l, false);
            }
            if (v instanceof Number) {
                double d = ((Number) v).doubleValue();
                return Double.isFinite(d) && d >= 0 ? new Reading(gauge, Math.round(d), false) : null;
            }
            return null;
        }
    }

    private final Map<String, Reading> last = new HashMap<>();
    private boolean baselined;

    /**
     * Messages sent since the previous call, or -1 when unknown: at the first call (which records the
     * baseline) and when no gauge is registered ({@code now} empty: no remote worker, or
     * {@code topology.enable.send.iconnection.metrics: false}).
     */
    long window(Map<String, Reading> now) {
        long sum = 0;
        for (Map.Entry<String, Reading> e : now.entrySet()) {
            Reading r = e.getValue();
            Reading before = last.get(e.getKey());
            if (before == null || before.gauge() != r.gauge()) {
                sum += r.value();
            } else if (r.value() >= before.value()) {
                sum += r.value() - before.value();
            } else if (r.int32() && before.int32()) {
                sum += r.value() + WRAP - before.value();
            } else {
                sum += r.value();
            }
        }
        boolean report = baselined && !now.isEmpty();
        last.clear();
        last.putAll(now);
        baselined = true;
        return report ? sum : -1;
    }
}
