package io.schedulerpy.topologies;

import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/**
 * An inner bolt of Linear, Diamond and Star: burns its per-tuple CPU, forwards the payload
 * anchored to the input tuple and acks the input.
 */
final class ForwardBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;

    private final long cpuMicros;
    private transient OutputCollector collector;

    ForwardBolt(long cpuMicros) {
        this.cpuMicros = cpuMicros;
    }

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
    }

    @Override
    public void execute(Tuple input) {
        CpuWork.burnMicros(cpuMicros);
        collector.emit(input, new Values(input.getValue(0)));
        collector.ack(input);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("payload"));
    }
}
