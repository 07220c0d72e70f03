package io.schedulerpy.topologies;

import java.util.HashMap;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.tuple.Tuple;

/**
 * Word count's counter (the sink): fields grouping on {@code word} sends every occurrence of a
 * word to the same executor, which keeps its running count.
 */
final class CountBolt extends WorkBolt {
    private static final long serialVersionUID = 1L;

    private transient Map<String, long[]> counts;

    CountBolt(long cpuMicros) {
        super(cpuMicros);
    }

    @Override
    void process(Tuple input, OutputCollector collector) {
        if (counts == null) {
            counts = new HashMap<>();
        }
        counts.computeIfAbsent(input.getString(0), word -> new long[1])[0]++;
    }
}
