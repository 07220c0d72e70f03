package io.schedulerpy.topologies;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.storm.Config;
import org.apache.storm.generated.ComponentCommon;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.generated.Grouping;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.Test;

class KindTest {
    private static StormTopology build(Kind kind, Map<String, Object> conf) {
        return kind.build(new BenchOptions(conf, kind.components()));
    }

    private static ComponentCommon common(StormTopology topology, String component) {
        if (topology.get_spouts().containsKey(component)) {
            return topology.get_spouts().get(component).get_common();
        }
        return topology.get_bolts().get(component).get_common();
    }

    /** source component -> grouping ("shuffle" or "fields:<fields>") of every input of {@code bolt}. */
    private static Map<String, String> inputs(StormTopology topology, String bolt) {
        Map<String, String> inputs = new TreeMap<>();
        for (Map.Entry<GlobalStreamId, Grouping> input : common(topology, bolt).get_inputs().entrySet()) {
            Grouping grouping = input.getValue();
            String kind = grouping.is_set_shuffle() ? "shuffle"
                : grouping.is_set_fields() ? "fields:" + grouping.get_fields() : grouping.getSetField().toString();
            inputs.put(input.getKey().get_componentId(), kind);
        }
        return inputs;
    }

    @Test
    void everyKindBuildsExactlyItsComponents() {
        for (Kind kind : Kind.values()) {
            StormTopology topology = build(kind, Map.of());
            Set<String> built = new HashSet<>(topology.get_spouts().keySet());
            built.addAll(topology.get_bolts().keySet());
            assertEquals(new TreeSet<>(kind.components()), new TreeSet<>(built), kind.id());
        }
    }

    @Test
    void wordCountIsSpoutSplitThenFieldsGroupedCount() {
        StormTopology topology = build(Kind.WORDCOUNT, Map.of());
        assertEquals(Set.of("sentences"), topology.get_spouts().keySet());
        assertEquals(Map.of("sentences", "shuffle"), inputs(topology, "split"));
        assertEquals(Map.of("split", "fields:[word]"), inputs(topology, "count"));
        assertEquals(1, Submit.parallelism(topology, "sentences"));
        assertEquals(2, Submit.parallelism(topology, "split"));
        assertEquals(2, Submit.parallelism(topology, "count"));
    }

    @Test
    void linearIsAShuffledChain() {
        StormTopology topology = build(Kind.LINEAR, Map.of());
        assertEquals(Map.of("word", "shuffle"), inputs(topology, "exclaim1"));
        assertEquals(Map.of("exclaim1", "shuffle"), inputs(topology, "exclaim2"));
        assertEquals(Map.of("exclaim2", "shuffle"), inputs(topology, "exclaim_output_3"));
    }

    @Test
    void diamondFansOutToFourBoltsAndBackIn() {
        StormTopology topology = build(Kind.DIAMOND, Map.of());
        for (int i = 1; i <= 4; i++) {
            assertEquals(Map.of("spout_head", "shuffle"), inputs(topology, "bolt_" + i));
        }
        assertEquals(Map.of("bolt_1", "shuffle", "bolt_2", "shuffle", "bolt_3", "shuffle", "bolt_4", "shuffle"),
                     inputs(topology, "bolt_output_3"));
    }

    @Test
    void starHasTwoSpoutsIntoTheCenterAndTwoOutputs() {
        StormTopology topology = build(Kind.STAR, Map.of());
        assertEquals(Set.of("spout_0", "spout_1"), topology.get_spouts().keySet());
        assertEquals(Map.of("spout_0", "shuffle", "spout_1", "shuffle"), inputs(topology, "center"));
        assertEquals(Map.of("center", "shuffle"), inputs(topology, "bolt_output_0"));
        assertEquals(Map.of("center", "shuffle"), inputs(topology, "bolt_output_1"));
    }

    @Test
    void parallelismComesFromTheOptions() {
        StormTopology topology = build(Kind.STAR, Map.of(
            BenchOptions.PARALLELISM, 3L, BenchOptions.PARALLELISM + ".center", 6L));
        assertEquals(3, Submit.parallelism(topology, "spout_0"));
        assertEquals(6, Submit.parallelism(topology, "center"));
        assertEquals(3, Submit.parallelism(topology, "bolt_output_1"));
    }

    @Test
    void everyComponentDeclaresCpuAndMemoryForResourceAwareSchedulers() {
        StormTopology topology = build(Kind.LINEAR, Map.of(
            BenchOptions.MEMORY_MB, 200L, BenchOptions.CPU_LOAD + ".exclaim2", 35L));
        Map<String, Double> cpu = new TreeMap<>();
        for (String component : Kind.LINEAR.components()) {
            Map<String, Object> conf = Utils.parseJson(common(topology, component).get_json_conf());
            assertEquals(200.0, ((Number) conf.get(Config.TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB)).doubleValue(),
                         component);
            cpu.put(component, ((Number) conf.get(Config.TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT)).doubleValue());
        }
        assertEquals(Map.of("word", Kind.SPOUT_CPU_LOAD, "exclaim1", Kind.BOLT_CPU_LOAD, "exclaim2", 35.0,
                            "exclaim_output_3", Kind.BOLT_CPU_LOAD), cpu);
    }

    @Test
    void kindsParseByTheirCommandLineNames() {
        assertEquals(List.of("wordcount", "linear", "diamond", "star"),
                     List.of(Kind.values()).stream().map(Kind::id).toList());
        assertEquals(Kind.DIAMOND, Kind.parse("Diamond"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Kind.parse("ring"));
        assertTrue(e.getMessage().contains("expected one of [wordcount, linear, diamond, star]"), e.getMessage());
    }
}
