package io.schedulerpy.topologies;

import java.nio.file.Paths;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;

/**
 * The bolts of the benchmark topologies: for every input tuple, burn the per-tuple CPU
 * ({@link CpuWork}), {@link #process} it (emits anchored to the input), then ack it.
 * A bolt with no output field is a sink. With {@code bench.control.file} set, the per-tuple CPU
 * follows that file while the topology runs ({@link CpuControl}).
 */
abstract class WorkBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;

    private final long cpuMicros;
    private final String[] outputFields;
    private transient OutputCollector collector;
    private transient CpuControl control;

    WorkBolt(long cpuMicros, String... outputFields) {
        this.cpuMicros = cpuMicros;
        this.outputFields = outputFields;
    }

    /** Handles {@code input}; emits with {@code collector.emit(input, ...)} so they are anchored. */
    abstract void process(Tuple input, OutputCollector collector);

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        Object file = conf.get(BenchOptions.CONTROL_FILE);
        if (file != null && !file.toString().isBlank()) {
            control = new CpuControl(Paths.get(file.toString()), context.getThisComponentId(), cpuMicros);
        }
    }

    @Override
    public final void execute(Tuple input) {
        CpuWork.burnMicros(control == null ? cpuMicros : control.micros());
        process(input, collector);
        collector.ack(input);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        if (outputFields.length > 0) {
            declarer.declare(new Fields(outputFields));
        }
    }
}
