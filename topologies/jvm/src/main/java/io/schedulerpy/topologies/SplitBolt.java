package io.schedulerpy.topologies;

import org.apache.storm.task.OutputCollector;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/** Word count's split bolt: one tuple {@code word} per word of the sentence. */
final class SplitBolt extends WorkBolt {
    private static final long serialVersionUID = 1L;

    SplitBolt(long cpuMicros) {
        super(cpuMicros, "word");
    }

    @Override
    void process(Tuple input, OutputCollector collector) {
        for (String word : input.getString(0).split(" ")) {
            if (!word.isEmpty()) {
                collector.emit(input, new Values(word));
            }
        }
    }
}
