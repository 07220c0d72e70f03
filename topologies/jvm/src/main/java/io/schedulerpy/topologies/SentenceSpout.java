package io.schedulerpy.topologies;

import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Values;

/** Word count's spout: cycles through a fixed set of sentences, one field {@code sentence}. */
final class SentenceSpout extends PacedSpout {
    private static final long serialVersionUID = 1L;

    static final String[] SENTENCES = {
        "the cow jumped over the moon",
        "an apple a day keeps the doctor away",
        "four score and seven years ago",
        "snow white and the seven dwarfs",
        "i am at two with nature",
        "a stream of tuples flows through the topology",
        "the scheduler places every executor on a worker",
        "little strokes fell great oaks",
    };

    SentenceSpout(double ratePerSecond, long cpuMicros) {
        super(ratePerSecond, cpuMicros);
    }

    @Override
    Values tuple(long seq) {
        return new Values(SENTENCES[(int) (seq % SENTENCES.length)]);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("sentence"));
    }
}
