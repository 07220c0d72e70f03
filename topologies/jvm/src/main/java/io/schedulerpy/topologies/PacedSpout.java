package io.schedulerpy.topologies;

import java.util.ArrayDeque;
import java.util.Map;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Values;

/**
 * A reliable, paced spout: every tuple carries a message id (its sequence number), so Storm tracks
 * it to completion and the acked counts and complete latency are meaningful; a failed (timed-out)
 * tuple is emitted again with the same id and content, before any new one. Subclasses say what
 * tuple sequence number {@code seq} is.
 */
abstract class PacedSpout extends BaseRichSpout {
    private static final long serialVersionUID = 1L;

    private final double ratePerSecond;
    private final long cpuMicros;

    private transient SpoutOutputCollector collector;
    private transient Pacer pacer;
    private transient ArrayDeque<Long> replays;
    private transient long nextSeq;

    /**
     * @param ratePerSecond new tuples per second from this executor, 0 for unthrottled
     * @param cpuMicros     thread CPU time to burn per emitted tuple
     */
    PacedSpout(double ratePerSecond, long cpuMicros) {
        this.ratePerSecond = ratePerSecond;
        this.cpuMicros = cpuMicros;
    }

    /** The tuple with sequence number {@code seq}; the same {@code seq} must give the same tuple. */
    abstract Values tuple(long seq);

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        this.collector = collector;
        this.pacer = new Pacer(ratePerSecond, System.nanoTime());
        this.replays = new ArrayDeque<>();
        this.nextSeq = 0;
    }

    @Override
    public void nextTuple() {
        if (!pacer.tryAcquire(System.nanoTime())) {
            return;
        }
        Long replay = replays.poll();
        long seq = replay != null ? replay : nextSeq++;
        CpuWork.burnMicros(cpuMicros);
        collector.emit(tuple(seq), seq);
    }

    @Override
    public void fail(Object msgId) {
        replays.add((Long) msgId);
    }
}
