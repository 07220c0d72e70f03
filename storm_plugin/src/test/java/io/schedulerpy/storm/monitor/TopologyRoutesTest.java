package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.testing.TestWordCounter;
import org.apache.storm.testing.TestWordSpout;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;
import org.junit.jupiter.api.Test;

class TopologyRoutesTest {
    static StormTopology topology() {
        TopologyBuilder b = new TopologyBuilder();
        b.setSpout("spout", new TestWordSpout(), 2);
        b.setBolt("split", new TestWordCounter(), 2).shuffleGrouping("spout");
        b.setBolt("count", new TestWordCounter(), 2).fieldsGrouping("split", new Fields("word"))
            .allGrouping("spout", "control");
        b.setBolt("total", new TestWordCounter(), 1).globalGrouping("count");
        b.setBolt("local", new TestWordCounter(), 1).localOrShuffleGrouping("split").noneGrouping("spout");
        b.setBolt("pk", new TestWordCounter(), 1).partialKeyGrouping("split", new Fields("word"));
        b.setBolt("dir", new TestWordCounter(), 1).directGrouping("count");
        return b.createTopology();
    }

    @Test
    void everySubscriptionBecomesARouteWithItsGrouping() {
        List<TopologyRoutes.Route> r = TopologyRoutes.of(topology(), null);
        assertEquals(List.of(
            new TopologyRoutes.Route("count", "default", "dir", "direct", List.of()),
            new TopologyRoutes.Route("count", "default", "total", "global", List.of()),
            new TopologyRoutes.Route("split", "default", "count", "fields", List.of("word")),
            new TopologyRoutes.Route("split", "default", "local", "local_or_shuffle", List.of()),
            new TopologyRoutes.Route("split", "default", "pk", "partial_key", List.of()),
            new TopologyRoutes.Route("spout", "control", "count", "all", List.of()),
            new TopologyRoutes.Route("spout", "default", "local", "none", List.of()),
            new TopologyRoutes.Route("spout", "default", "split", "shuffle", List.of())), r);
    }

    @Test
    void onlyTheRoutesOutOfTheWorkersComponents() {
        List<TopologyRoutes.Route> r = TopologyRoutes.of(topology(), Set.of("count"));
        assertEquals(2, r.size());
        assertEquals(Set.of("dir", "total"), Set.of(r.get(0).target(), r.get(1).target()));
        assertEquals(List.of(), TopologyRoutes.of(null, null), "no topology, no routes");
    }
}
