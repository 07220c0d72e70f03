package io.schedulerpy.topologies;

import java.util.Arrays;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Values;

/**
 * The spout of Linear, Diamond and Star: every tuple is one field {@code payload} of a fixed size
 * in bytes, so the traffic between workers, in bytes, is what a placement changes (the
 * network-bound micro-benchmarks of R-Storm, Peng et al., Middleware 2015, section 6.3.1).
 */
final class PayloadSpout extends PacedSpout {
    private static final long serialVersionUID = 1L;

    private final int payloadBytes;
    private transient byte[] payload;

    PayloadSpout(int payloadBytes, double ratePerSecond, long cpuMicros) {
        super(ratePerSecond, cpuMicros);
        if (payloadBytes < 1) {
            throw new IllegalArgumentException("payload must be at least 1 byte, found " + payloadBytes);
        }
        this.payloadBytes = payloadBytes;
    }

    @Override
    Values tuple(long seq) {
        if (payload == null) {
            payload = new byte[payloadBytes];
            Arrays.fill(payload, (byte) 'x');
        }
        return new Values(payload);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("payload"));
    }
}
