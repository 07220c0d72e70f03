package io.schedulerpy.topologies;

import org.apache.storm.task.OutputCollector;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/** An inner bolt of Linear, Diamond and Star: forwards the payload unchanged. */
final class ForwardBolt extends WorkBolt {
    private static final long serialVersionUID = 1L;

    ForwardBolt(long cpuMicros) {
        super(cpuMicros, "payload");
    }

    @Override
    void process(Tuple input, OutputCollector collector) {
        collector.emit(input, new Values(input.getValue(0)));
    }
}
