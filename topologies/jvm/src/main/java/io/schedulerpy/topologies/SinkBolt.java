package io.schedulerpy.topologies;

import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;

/**
 * An output bolt of Linear, Diamond and Star: burns its per-tuple CPU and acks. Its executed
 * count (Nimbus' bolt stats) is the topology's sink throughput.
 */
final class SinkBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;

    private final long cpuMicros;
    private transient OutputCollector collector;

    SinkBolt(long cpuMicros) {
        this.cpuMicros = cpuMicros;
    }

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
    }

    @Override
    public void execute(Tuple input) {
        CpuWork.burnMicros(cpuMicros);
        collector.ack(input);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        // a sink: no output streams
    }
}
