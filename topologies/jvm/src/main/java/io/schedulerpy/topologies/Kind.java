package io.schedulerpy.topologies;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.topology.BoltDeclarer;
import org.apache.storm.topology.IRichBolt;
import org.apache.storm.topology.IRichSpout;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;

/**
 * The benchmark topologies {@link Submit} can build. Linear, Diamond and Star are the shapes of
 * R-Storm's micro-benchmarks (Peng et al., Middleware 2015, section 6.3), with the component ids
 * and edges of scheduler_py/bench/paper003_rstorm.py (every edge a shuffle grouping); word count
 * is Storm's classic, with a fields grouping into the counters. Every component declares its CPU
 * and memory per executor so Storm's ResourceAwareScheduler and the brain's resource-aware
 * algorithms can place it.
 */
public enum Kind {
    /** {@code sentences -> split (shuffle) -> count (fields grouping on word)}. */
    WORDCOUNT(List.of("sentences", "split", "count")) {
        @Override
        void declare(Declarer d) {
            BenchOptions o = d.options;
            d.spout("sentences", new SentenceSpout(o.spoutRate(), o.cpuMicros("sentences")), 1);
            d.bolt("split", new SplitBolt(o.cpuMicros("split"))).shuffleGrouping("sentences");
            d.bolt("count", new CountBolt(o.cpuMicros("count"))).fieldsGrouping("split", new Fields("word"));
        }
    },
    /** {@code word -> exclaim1 -> exclaim2 -> exclaim_output_3}, a chain. */
    LINEAR(List.of("word", "exclaim1", "exclaim2", "exclaim_output_3")) {
        @Override
        void declare(Declarer d) {
            d.payloadSpout("word");
            d.forward("exclaim1").shuffleGrouping("word");
            d.forward("exclaim2").shuffleGrouping("exclaim1");
            d.sink("exclaim_output_3").shuffleGrouping("exclaim2");
        }
    },
    /** {@code spout_head -> bolt_1..bolt_4 -> bolt_output_3}: every tuple fans out to four bolts and back in. */
    DIAMOND(List.of("spout_head", "bolt_1", "bolt_2", "bolt_3", "bolt_4", "bolt_output_3")) {
        @Override
        void declare(Declarer d) {
            d.payloadSpout("spout_head");
            BoltDeclarer output = d.sink("bolt_output_3");
            for (int i = 1; i <= 4; i++) {
                String middle = "bolt_" + i;
                d.forward(middle).shuffleGrouping("spout_head");
                output.shuffleGrouping(middle);
            }
        }
    },
    /** {@code spout_0, spout_1 -> center -> bolt_output_0, bolt_output_1}: two in, two out. */
    STAR(List.of("spout_0", "spout_1", "center", "bolt_output_0", "bolt_output_1")) {
        @Override
        void declare(Declarer d) {
            d.payloadSpout("spout_0");
            d.payloadSpout("spout_1");
            d.forward("center").shuffleGrouping("spout_0").shuffleGrouping("spout_1");
            d.sink("bolt_output_0").shuffleGrouping("center");
            d.sink("bolt_output_1").shuffleGrouping("center");
        }
    };

    /** Executors per component unless {@code bench.parallelism[.<component>]} says otherwise. */
    public static final int DEFAULT_PARALLELISM = 2;
    /**
     * Declared CPU points (100 = one core) per spout / bolt executor: the values most components
     * of R-Storm's compute-bound evaluation declare (scheduler_py/bench/paper003_rstorm.py).
     */
    public static final double SPOUT_CPU_LOAD = 50.0;
    public static final double BOLT_CPU_LOAD = 20.0;

    private final List<String> components;

    Kind(List<String> components) {
        this.components = components;
    }

    /** The topology's component ids, in declaration order. */
    public List<String> components() {
        return components;
    }

    /** The command-line name: {@code wordcount}, {@code linear}, {@code diamond}, {@code star}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind named {@code id} (case-insensitive). */
    public static Kind parse(String id) {
        for (Kind kind : values()) {
            if (kind.id().equalsIgnoreCase(id)) {
                return kind;
            }
        }
        List<String> ids = new ArrayList<>();
        for (Kind kind : values()) {
            ids.add(kind.id());
        }
        throw new IllegalArgumentException("unknown topology kind '" + id + "': expected one of " + ids);
    }

    /** Builds this topology with {@code options} (already validated against {@link #components()}). */
    public StormTopology build(BenchOptions options) {
        TopologyBuilder builder = new TopologyBuilder();
        declare(new Declarer(builder, options));
        return builder.createTopology();
    }

    abstract void declare(Declarer declarer);

    /** Declares components with their parallelism, CPU work and resources from the options. */
    static final class Declarer {
        private final TopologyBuilder builder;
        final BenchOptions options;

        Declarer(TopologyBuilder builder, BenchOptions options) {
            this.builder = builder;
            this.options = options;
        }

        void spout(String id, IRichSpout spout, int defaultParallelism) {
            builder.setSpout(id, spout, options.parallelism(id, defaultParallelism))
                .setCPULoad(options.cpuLoad(id, SPOUT_CPU_LOAD))
                .setMemoryLoad(options.memoryMb(id));
        }

        void payloadSpout(String id) {
            spout(id, new PayloadSpout(options.payloadBytes(), options.spoutRate(), options.cpuMicros(id)),
                  DEFAULT_PARALLELISM);
        }

        BoltDeclarer bolt(String id, IRichBolt bolt) {
            BoltDeclarer declarer = builder.setBolt(id, bolt, options.parallelism(id, DEFAULT_PARALLELISM));
            declarer.setCPULoad(options.cpuLoad(id, BOLT_CPU_LOAD)).setMemoryLoad(options.memoryMb(id));
            return declarer;
        }

        BoltDeclarer forward(String id) {
            return bolt(id, new ForwardBolt(options.cpuMicros(id)));
        }

        BoltDeclarer sink(String id) {
            return bolt(id, new SinkBolt(options.cpuMicros(id)));
        }
    }
}
