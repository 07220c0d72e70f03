package io.schedulerpy.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.schedulerpy.storm.thrift.BlacklistedSupervisor;
import io.schedulerpy.storm.thrift.ClusterSnapshot;
import io.schedulerpy.storm.thrift.Component;
import io.schedulerpy.storm.thrift.Executor;
import io.schedulerpy.storm.thrift.ExecutorPlacement;
import io.schedulerpy.storm.thrift.GroupingType;
import io.schedulerpy.storm.thrift.InputStream;
import io.schedulerpy.storm.thrift.Slot;
import io.schedulerpy.storm.thrift.Supervisor;
import io.schedulerpy.storm.thrift.Topology;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.storm.Config;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.grouping.PartialKeyGrouping;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.scheduler.resource.normalization.NormalizedResources;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SnapshotBuilderTest {
    private TopologyDetails wordCount;
    private TopologyDetails other;
    private Cluster cluster;

    /**
     * words(2 executors) -shuffle-> split(2 executors, 4 tasks) -fields(word)-> count(2) -global-> total(1);
     * words -all-> audit(1), which also reads split (local-or-shuffle), count (direct), total (none) and
     * words (custom partial-key grouping).
     */
    private static StormTopology wordCountTopology() {
        TopologyBuilder builder = new TopologyBuilder();
        builder.setSpout("words", new Fixtures.WordSpout(), 2);
        builder.setBolt("split", new Fixtures.WordBolt(), 2).setNumTasks(4).shuffleGrouping("words")
            .setCPULoad(50.0).setMemoryLoad(256.0, 64.0);
        builder.setBolt("count", new Fixtures.WordBolt(), 2).fieldsGrouping("split", new Fields("word"));
        builder.setBolt("total", new Fixtures.WordBolt(), 1).globalGrouping("count");
        builder.setBolt("audit", new Fixtures.WordBolt(), 1)
            .allGrouping("words")
            .localOrShuffleGrouping("split")
            .directGrouping("count")
            .noneGrouping("total")
            .customGrouping("words", "other-stream", new PartialKeyGrouping(new Fields("word")));
        return builder.createTopology();
    }

    @BeforeEach
    void setUp() throws Exception {
        wordCount = Fixtures.topology("wc-1", wordCountTopology(), Fixtures.topoConf("wc", 3,
            Config.TOPOLOGY_ACKER_EXECUTORS, 1,
            Config.TOPOLOGY_DISABLE_LOADAWARE_MESSAGING, true,
            Config.TOPOLOGY_MAX_SPOUT_PENDING, 1000,
            "scheduler.algorithm", "td",
            "scheduler.weight", 1.5,
            "scheduler.pin", Arrays.asList("a", "b\"c"),
            "unrelated.key", "x"));
        other = Fixtures.topology("other-1", Fixtures.simpleTopology(), Fixtures.topoConf("other", 1));
        cluster = Fixtures.cluster(Fixtures.supervisors(3, 2, 400.0, 4096.0), new Topologies(wordCount, other));
        Map<String, List<String>> racks = new HashMap<>();
        racks.put("rack-a", Arrays.asList("host-0", "host-1"));
        racks.put("/default-rack", Collections.singletonList("host-2"));
        cluster.setNetworkTopography(racks);

        // wc-1: first 3 executors on sup-0:6700, the next 2 on sup-1:6701; the rest unassigned.
        List<ExecutorDetails> execs = Fixtures.executors(wordCount);
        cluster.assign(new WorkerSlot("sup-0", 6700), "wc-1", execs.subList(0, 3));
        cluster.assign(new WorkerSlot("sup-1", 6701), "wc-1", execs.subList(3, 5));
        cluster.assign(new WorkerSlot("sup-2", 6700), "other-1", Fixtures.executors(other));
    }

    private ClusterSnapshot build() {
        return new SnapshotBuilder().build(cluster, Arrays.asList(wordCount, other), 7, 1234L);
    }

    private static Topology topology(ClusterSnapshot snapshot, String id) {
        return snapshot.getTopologies().stream().filter(t -> t.getId().equals(id)).findFirst().orElseThrow();
    }

    private static Component component(Topology topology, String id) {
        return topology.getComponents().stream().filter(c -> c.getId().equals(id)).findFirst()
            .orElseThrow(() -> new AssertionError("no component " + id + " in " + topology.getComponents()));
    }

    private static InputStream input(Component component, String source, String stream) {
        return component.getInputs().stream().filter(i -> i.getComponent().equals(source) && i.getStream().equals(stream))
            .findFirst().orElseThrow(() -> new AssertionError("no input " + source + "/" + stream + " in " + component));
    }

    @Test
    void roundAndTopologiesAreSorted() {
        ClusterSnapshot snapshot = build();
        assertEquals(7, snapshot.getRound());
        assertEquals(1234L, snapshot.getTimestamp_ms());
        assertEquals(Arrays.asList("other-1", "wc-1"),
            snapshot.getTopologies().stream().map(Topology::getId).collect(Collectors.toList()));
    }

    @Test
    void supervisorsWithRacksSlotsAndResources() {
        ClusterSnapshot snapshot = build();
        List<Supervisor> sups = snapshot.getSupervisors();
        assertEquals(Arrays.asList("sup-0", "sup-1", "sup-2"), sups.stream().map(Supervisor::getId).collect(Collectors.toList()));
        Supervisor sup0 = sups.get(0);
        assertEquals("host-0", sup0.getHost());
        assertEquals("rack-a", sup0.getRack());
        assertEquals("rack-a", sups.get(1).getRack());
        assertFalse(sups.get(2).isSetRack(), "the default rack is not a known rack");

        assertEquals(Arrays.asList(6700, 6701), sup0.getSlots().stream().map(Slot::getPort).collect(Collectors.toList()));
        assertEquals("wc-1", sup0.getSlots().get(0).getTopology_id());
        assertFalse(sup0.getSlots().get(1).isSetTopology_id());
        assertFalse(sups.get(1).getSlots().get(0).isSetTopology_id());
        assertEquals("wc-1", sups.get(1).getSlots().get(1).getTopology_id());
        assertEquals("other-1", sups.get(2).getSlots().get(0).getTopology_id());

        assertEquals(400.0, sup0.getTotal_cpu(), 1e-9);
        assertEquals(4096.0, sup0.getTotal_memory_mb(), 1e-9);
        assertTrue(sup0.getAvailable_cpu() < 400.0, "executors on sup-0 use cpu: " + sup0.getAvailable_cpu());
        assertTrue(sup0.getAvailable_memory_mb() < 4096.0);
        double usedCpu = 400.0 - sup0.getAvailable_cpu();
        double expectedCpu = Fixtures.executors(wordCount).subList(0, 3).stream()
            .mapToDouble(wordCount::getTotalCpuReqTask).sum();
        assertEquals(expectedCpu, usedCpu, 1e-6);
    }

    @Test
    void blacklistedSupervisorsAreLeftOut() {
        cluster.blacklistHost("host-1");
        List<String> ids = build().getSupervisors().stream().map(Supervisor::getId).collect(Collectors.toList());
        assertEquals(Arrays.asList("sup-0", "sup-2"), ids);
    }

    @Test
    void blacklistedSupervisorsAndHostsAreReported() {
        ClusterSnapshot clean = build();
        assertTrue(clean.isSetBlacklisted_supervisors() && clean.getBlacklisted_supervisors().isEmpty());
        assertTrue(clean.isSetBlacklisted_hosts() && clean.getBlacklisted_hosts().isEmpty());

        cluster.blacklistHost("host-1");
        cluster.blacklistHost("host-gone"); // a blacklisted host without a live supervisor
        ClusterSnapshot snapshot = build();
        assertEquals(Arrays.asList(new BlacklistedSupervisor("sup-1", "host-1")),
            snapshot.getBlacklisted_supervisors());
        assertEquals(Arrays.asList("host-1", "host-gone"), snapshot.getBlacklisted_hosts());
    }

    @Test
    void componentsWithParallelismResourcesAndSystemFlags() {
        Topology wc = topology(build(), "wc-1");
        assertEquals("wc", wc.getName());
        assertEquals(3, wc.getNum_workers());
        assertEquals(Arrays.asList("__acker", "audit", "count", "split", "total", "words"),
            wc.getComponents().stream().map(Component::getId).collect(Collectors.toList()));

        Component words = component(wc, "words");
        assertTrue(words.isIs_spout());
        assertFalse(words.isIs_system());
        assertEquals(2, words.getParallelism());

        Component split = component(wc, "split");
        assertFalse(split.isIs_spout());
        assertEquals(2, split.getParallelism());
        assertEquals(50.0, split.getCpu_per_executor(), 1e-9);
        assertEquals(320.0, split.getMemory_mb_per_executor(), 1e-9);

        Component count = component(wc, "count");
        assertEquals(10.0, count.getCpu_per_executor(), 1e-9, "defaults.yaml topology.component.cpu.pcore.percent");
        assertEquals(128.0, count.getMemory_mb_per_executor(), 1e-9);

        Component acker = component(wc, "__acker");
        assertTrue(acker.isIs_system());
        assertFalse(acker.isIs_spout());
        assertEquals(1, acker.getParallelism());
    }

    @Test
    void inputsWithGroupings() {
        Topology wc = topology(build(), "wc-1");
        assertEquals(GroupingType.SHUFFLE, input(component(wc, "split"), "words", "default").getGrouping());

        InputStream fields = input(component(wc, "count"), "split", "default");
        assertEquals(GroupingType.FIELDS, fields.getGrouping());
        assertEquals(Collections.singletonList("word"), fields.getFields());

        InputStream global = input(component(wc, "total"), "count", "default");
        assertEquals(GroupingType.GLOBAL, global.getGrouping());
        assertFalse(global.isSetFields());

        Component audit = component(wc, "audit");
        assertEquals(GroupingType.ALL, input(audit, "words", "default").getGrouping());
        assertEquals(GroupingType.LOCAL_OR_SHUFFLE, input(audit, "split", "default").getGrouping());
        assertEquals(GroupingType.DIRECT, input(audit, "count", "default").getGrouping());
        assertEquals(GroupingType.NONE, input(audit, "total", "default").getGrouping());
        assertEquals(GroupingType.CUSTOM, input(audit, "words", "other-stream").getGrouping());
    }

    @Test
    void ackerGetsInputsFromEverySpoutAndBoltAsStormWiresIt() {
        Topology wc = topology(build(), "wc-1");
        Component acker = component(wc, "__acker");
        InputStream init = input(acker, "words", "__ack_init");
        assertEquals(GroupingType.FIELDS, init.getGrouping());
        assertEquals(Collections.singletonList("id"), init.getFields());
        for (String bolt : Arrays.asList("split", "count", "total", "audit")) {
            for (String stream : Arrays.asList("__ack_ack", "__ack_fail", "__ack_reset_timeout")) {
                assertEquals(GroupingType.FIELDS, input(acker, bolt, stream).getGrouping());
            }
        }
        assertEquals(1 + 4 * 3, acker.getInputs().size());
        // and spouts listen to the acker
        assertEquals(GroupingType.DIRECT, input(component(wc, "words"), "__acker", "__ack_ack").getGrouping());
    }

    @Test
    void eventLoggerAndMetricsConsumersAreSystemComponents() throws Exception {
        Map<String, Object> register = new HashMap<>();
        register.put("class", "org.apache.storm.metric.LoggingMetricsConsumer");
        register.put("parallelism.hint", 1);
        TopologyDetails td = Fixtures.topology("m-1", Fixtures.simpleTopology(), Fixtures.topoConf("m", 1,
            Config.TOPOLOGY_EVENTLOGGER_EXECUTORS, 1,
            Config.TOPOLOGY_METRICS_CONSUMER_REGISTER, Collections.singletonList(register)));
        cluster = Fixtures.cluster(Fixtures.supervisors(1, 2, 400.0, 4096.0), new Topologies(td));
        Topology topo = new SnapshotBuilder().build(cluster, Collections.singletonList(td), 1, 0).getTopologies().get(0);

        String metrics = "__metrics_org.apache.storm.metric.LoggingMetricsConsumer";
        assertEquals(Arrays.asList("__acker", "__eventlogger", metrics, "bolt", "spout"),
            topo.getComponents().stream().map(Component::getId).collect(Collectors.toList()));
        Component eventLogger = component(topo, "__eventlogger");
        assertTrue(eventLogger.isIs_system());
        assertEquals(GroupingType.FIELDS, input(eventLogger, "spout", "__eventlog").getGrouping());
        Component consumer = component(topo, metrics);
        assertTrue(consumer.isIs_system());
        assertEquals(GroupingType.SHUFFLE, input(consumer, "bolt", "__metrics").getGrouping());
        assertTrue(consumer.getInputs().stream().noneMatch(i -> i.getComponent().equals("__system")),
            "__system owns no scheduled executor, so inputs from it are dropped");
        // every executor's component is listed
        Set<String> listed = topo.getComponents().stream().map(Component::getId).collect(Collectors.toSet());
        assertTrue(topo.getExecutors().stream().allMatch(e -> listed.contains(e.getComponent())));
    }

    @Test
    void executorsWithTaskRanges() {
        Topology wc = topology(build(), "wc-1");
        List<Executor> execs = wc.getExecutors();
        assertEquals(wordCount.getExecutors().size(), execs.size());
        for (int i = 1; i < execs.size(); i++) {
            assertTrue(execs.get(i - 1).getTask_start() < execs.get(i).getTask_start(), "sorted by task");
        }
        List<Executor> split = execs.stream().filter(e -> e.getComponent().equals("split")).collect(Collectors.toList());
        assertEquals(2, split.size());
        for (Executor e : split) {
            assertEquals(1, e.getTask_end() - e.getTask_start(), "4 tasks in 2 executors: " + e);
        }
        for (Executor e : execs) {
            assertEquals(wordCount.getComponentFromExecutor(new ExecutorDetails(e.getTask_start(), e.getTask_end())),
                e.getComponent());
        }
    }

    @Test
    void currentAssignmentAndNeedsScheduling() {
        ClusterSnapshot snapshot = build();
        Topology wc = topology(snapshot, "wc-1");
        List<ExecutorDetails> execs = Fixtures.executors(wordCount);
        assertEquals(5, wc.getCurrent().size());
        ExecutorPlacement first = wc.getCurrent().get(0);
        assertEquals(execs.get(0).getStartTask(), first.getExecutor().getTask_start());
        assertEquals("sup-0", first.getSupervisor_id());
        assertEquals(6700, first.getPort());
        ExecutorPlacement last = wc.getCurrent().get(4);
        assertEquals(execs.get(4).getStartTask(), last.getExecutor().getTask_start());
        assertEquals("sup-1", last.getSupervisor_id());
        assertEquals(6701, last.getPort());
        assertTrue(wc.isNeeds_scheduling(), "executors are unassigned");

        Topology otherTopo = topology(snapshot, "other-1");
        assertFalse(otherTopo.isNeeds_scheduling(), "fully assigned on its 1 worker");
        assertEquals(otherTopo.getExecutors().size(), otherTopo.getCurrent().size());
    }

    @Test
    void settledTopologiesDoNotNeedScheduling() {
        TopologyDetails twoWorkers = new TopologyDetails("other-1", Fixtures.topoConf("other", 2), other.getTopology(), 2,
            other.getExecutorToComponent(), 0, "user");
        cluster = Fixtures.nextRound(cluster, new Topologies(wordCount, twoWorkers));
        assertTrue(cluster.needsScheduling(twoWorkers), "1 worker assigned, topology.workers is 2");
        ClusterSnapshot plain = new SnapshotBuilder().build(cluster, Arrays.asList(wordCount, twoWorkers), 1, 0);
        assertTrue(topology(plain, "other-1").isNeeds_scheduling());
        ClusterSnapshot settled = new SnapshotBuilder().build(cluster, Arrays.asList(wordCount, twoWorkers), 1, 0,
            Collections.singleton("other-1"));
        assertFalse(topology(settled, "other-1").isNeeds_scheduling());
    }

    @Test
    void confKeysAreJsonEncoded() {
        Map<String, String> conf = topology(build(), "wc-1").getConf();
        assertEquals("\"td\"", conf.get("scheduler.algorithm"));
        assertEquals("1.5", conf.get("scheduler.weight"));
        assertEquals("[\"a\",\"b\\\"c\"]", conf.get("scheduler.pin"));
        assertEquals("3", conf.get("topology.workers"));
        assertEquals("\"wc\"", conf.get("topology.name"));
        assertEquals("1", conf.get("topology.acker.executors"));
        assertNull(conf.get("unrelated.key"));
        assertNotNull(conf.get("topology.message.timeout.secs"), "the drain falls back to it");
        assertEquals("true", conf.get("topology.disable.loadaware.messaging"), "the routing the plan is made for");
        assertEquals("1000", conf.get("topology.max.spout.pending"));
        Map<String, String> otherConf = topology(build(), "other-1").getConf();
        assertEquals("null", otherConf.get("topology.acker.executors"), "defaults.yaml has topology.acker.executors: null");
        assertNotNull(otherConf.get("scheduler.display.resource"), "Storm's own scheduler.* keys pass too");
    }

    /** A supervisor on host-{@code i} with 2 ports and the given {@code supervisor.scheduler.meta}. */
    private static SupervisorDetails supervisorWithMeta(int i, Map<String, Object> meta) {
        Map<String, Double> resources = new HashMap<>();
        resources.put(Config.SUPERVISOR_CPU_CAPACITY, 400.0);
        resources.put(Config.SUPERVISOR_MEMORY_CAPACITY_MB, 4096.0);
        return new SupervisorDetails("sup-" + i, "host-" + i, meta, Arrays.asList(6700, 6701),
            NormalizedResources.RESOURCE_NAME_NORMALIZER.normalizedResourceMap(resources));
    }

    @Test
    void declaredLinkCapacitiesAreSentAndBadOnesLeftOut() {
        Map<String, Object> declared = new HashMap<>();
        declared.put(SnapshotBuilder.HOST_LINK_MBIT, "100");
        declared.put(SnapshotBuilder.RACK_UPLINK_MBIT, " 50.5 ");
        declared.put("unrelated", "x");
        Map<String, Object> bad = new HashMap<>();
        bad.put(SnapshotBuilder.HOST_LINK_MBIT, "fast");
        bad.put(SnapshotBuilder.RACK_UPLINK_MBIT, "-5");
        Map<String, Object> unquoted = new HashMap<>();
        unquoted.put(SnapshotBuilder.HOST_LINK_MBIT, 1000);  // a YAML number, not a string
        unquoted.put(SnapshotBuilder.RACK_UPLINK_MBIT, "Infinity");
        Map<String, SupervisorDetails> sups = new HashMap<>();
        for (SupervisorDetails sd : Arrays.asList(supervisorWithMeta(0, declared), supervisorWithMeta(1, bad),
            supervisorWithMeta(2, unquoted), supervisorWithMeta(3, null))) {
            sups.put(sd.getId(), sd);
        }
        Cluster withMeta = Fixtures.cluster(sups, new Topologies(other));
        SnapshotBuilder builder = new SnapshotBuilder();
        List<Supervisor> sent = builder.build(withMeta, Collections.singletonList(other), 1, 1L).getSupervisors();

        assertEquals(100.0, sent.get(0).getHost_link_mbit(), 1e-9);
        assertEquals(50.5, sent.get(0).getRack_uplink_mbit(), 1e-9);
        assertFalse(sent.get(1).isSetHost_link_mbit(), "not a number: left out");
        assertFalse(sent.get(1).isSetRack_uplink_mbit(), "below 0: left out");
        assertEquals(1000.0, sent.get(2).getHost_link_mbit(), 1e-9);
        assertFalse(sent.get(2).isSetRack_uplink_mbit(), "not finite: left out");
        assertFalse(sent.get(3).isSetHost_link_mbit(), "no scheduler meta: nothing declared");
        assertFalse(sent.get(3).isSetRack_uplink_mbit());
        assertNull(builder.declaredMbit(sups.get("sup-1"), SnapshotBuilder.HOST_LINK_MBIT));
    }
}
