package io.schedulerpy.topologies;

import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.HashMap;
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
    private transient LatencyLog latency;
    private transient HashMap<Long, Long> emittedAt;

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
        String directory = conf == null ? null : (String) conf.get(BenchOptions.LATENCY_DIR);
        if (directory != null && !directory.isBlank()) {
            this.latency = new LatencyLog(Paths.get(directory), context.getStormId(), context.getThisTaskId());
            this.emittedAt = new HashMap<>();
        }
    }

    @Override
    public void nextTuple() {
        if (latency != null) {
            latency.maybeWrite(System.nanoTime());
        }
        if (!pacer.tryAcquire(System.nanoTime())) {
            return;
        }
        Long replay = replays.poll();
        long seq = replay != null ? replay : nextSeq++;
        CpuWork.burnMicros(cpuMicros);
        if (latency != null) {
            emittedAt.put(seq, System.nanoTime());
        }
        collector.emit(tuple(seq), seq);
    }

    @Override
    public void ack(Object msgId) {
        if (latency != null) {
            Long emitted = emittedAt.remove(msgId);
            if (emitted != null) {
                latency.record(System.nanoTime() - emitted);
            }
        }
    }

    @Override
    public void fail(Object msgId) {
        if (emittedAt != null) {
            emittedAt.remove(msgId);   // replayed: its latency counts from the new emit
        }
        replays.add((Long) msgId);
    }

    @Override
    public void close() {
        if (latency != null) {
            latency.write();
        }
    }
}
