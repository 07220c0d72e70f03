package io.schedulerpy.topologies;

import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/** Word count's split bolt: one tuple {@code word} per word of the sentence, anchored to it. */
final class SplitBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;

    private final long cpuMicros;
    private transient OutputCollector collector;

    SplitBolt(long cpuMicros) {
        this.cpuMicros = cpuMicros;
    }

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
    }

    @Override
    public void execute(Tuple input) {
        CpuWork.burnMicros(cpuMicros);
        for (String word : input.getString(0).split(" ")) {
            if (!word.isEmpty()) {
                collector.emit(input, new Values(word));
            }
        }
        collector.ack(input);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("word"));
    }
}
