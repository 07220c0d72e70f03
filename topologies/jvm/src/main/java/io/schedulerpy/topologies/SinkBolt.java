package io.schedulerpy.topologies;

import org.apache.storm.task.OutputCollector;
import org.apache.storm.tuple.Tuple;

/**
 * An output bolt of Linear, Diamond and Star: only acks (after its CPU work). Its executed count
 * in Nimbus's bolt stats is the topology's sink throughput.
 */
final class SinkBolt extends WorkBolt {
    private static final long serialVersionUID = 1L;

    SinkBolt(long cpuMicros) {
        super(cpuMicros);
    }

    @Override
    void process(Tuple input, OutputCollector collector) {
        // a sink: nothing to emit
    }
}
