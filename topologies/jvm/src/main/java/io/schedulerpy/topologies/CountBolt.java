package io.schedulerpy.topologies;

import java.util.HashMap;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;

/**
 * Word count's counter (the sink): fields grouping on {@code word} sends every occurrence of a
 * word to the same executor, which keeps its running count and acks.
 */
final class CountBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;

    private final long cpuMicros;
    private transient OutputCollector collector;
    private transient Map<String, long[]> counts;

    CountBolt(long cpuMicros) {
        this.cpuMicros = cpuMicros;
    }

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        this.counts = new HashMap<>();
    }

    @Override
    public void execute(Tuple input) {
        CpuWork.burnMicros(cpuMicros);
        counts.computeIfAbsent(input.getString(0), word -> new long[1])[0]++;
        collector.ack(input);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        // a sink: no output streams
    }
}
