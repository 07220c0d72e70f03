package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.serialization.KryoTupleSerializer;
import org.apache.storm.task.GeneralTopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.topology.base.BaseBasicBolt;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.TupleImpl;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class TupleSizerTest {
    static class Spout extends BaseRichSpout {
        @Override
        public void open(Map<String, Object> conf, org.apache.storm.task.TopologyContext context,
                         org.apache.storm.spout.SpoutOutputCollector collector) {
        }

        @Override
        public void nextTuple() {
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer d) {
            d.declare(new Fields("sentence", "n"));
        }
    }

    static class Bolt extends BaseBasicBolt {
        @Override
        public void execute(org.apache.storm.tuple.Tuple input, org.apache.storm.topology.BasicOutputCollector c) {
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer d) {
        }
    }

    @Test
    void matchesStormsTupleSerializerForUnanchoredTuples() {
        Map<String, Object> conf = Utils.readDefaultConfig();
        TopologyBuilder b = new TopologyBuilder();
        b.setSpout("sentences", new Spout(), 1);
        b.setBolt("split", new Bolt(), 1).shuffleGrouping("sentences");
        Map<Integer, String> taskToComponent = Map.of(1, "sentences", 2, "split");
        Map<String, List<Integer>> compTasks = Map.of("sentences", List.of(1), "split", List.of(2));
        Map<String, Map<String, Fields>> fields = new HashMap<>();
        fields.put("sentences", Map.of("default", new Fields("sentence", "n")));
        fields.put("split", Map.of());
        GeneralTopologyContext ctx = new GeneralTopologyContext(b.createTopology(), conf, taskToComponent, compTasks,
            fields, "t-1-1");
        KryoTupleSerializer storm = new KryoTupleSerializer(conf, ctx);
        TupleSizer sizer = new TupleSizer(conf, new OnceLog(LoggerFactory.getLogger(getClass())));

        for (List<Object> values : List.of(
            Arrays.<Object>asList("the cow jumped over the moon", 1L),
            Arrays.<Object>asList("", 123456789012L),
            Arrays.<Object>asList("caf\u00e9 \u2603", null))) {
            int expected = storm.serialize(new TupleImpl(ctx, values, "sentences", 1, "default")).length;
            assertEquals(expected, sizer.size(1, values), "values " + values);
        }
    }

    @Test
    void varIntLengths() {
        assertEquals(1, TupleSizer.varIntLength(0));
        assertEquals(1, TupleSizer.varIntLength(127));
        assertEquals(2, TupleSizer.varIntLength(128));
        assertEquals(3, TupleSizer.varIntLength(1 << 14));
        assertEquals(5, TupleSizer.varIntLength(-1));          // the __system task
    }

    @Test
    void estimateWhenKryoIsUnusable() {
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put("topology.kryo.register", List.of("no.such.Clazz"));
        TupleSizer sizer = new TupleSizer(conf, new OnceLog(LoggerFactory.getLogger(getClass())));
        long n = sizer.size(3, Arrays.asList("hello", 5L));
        assertEquals(1 + 1 + 1 + TupleSizer.estimate(Arrays.asList("hello", 5L)), n);
        assertTrue(n > 10 && n < 40, "estimate " + n);
    }
}
