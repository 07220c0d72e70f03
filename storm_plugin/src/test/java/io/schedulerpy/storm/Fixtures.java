package io.schedulerpy.storm;

import io.schedulerpy.storm.thrift.Decision;
import io.schedulerpy.storm.thrift.ExecutorPlacement;
import io.schedulerpy.storm.thrift.TopologyPlan;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.Thrift;
import org.apache.storm.daemon.StormCommon;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.INimbus;
import org.apache.storm.scheduler.IScheduler;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.scheduler.resource.normalization.NormalizedResources;
import org.apache.storm.scheduler.resource.normalization.ResourceMetrics;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.utils.ServerUtils;
import org.apache.storm.utils.Utils;

/** Real Storm scheduler objects for the tests, built the way Nimbus builds them. */
final class Fixtures {
    static final Comparator<ExecutorDetails> BY_TASK =
        Comparator.comparingInt(ExecutorDetails::getStartTask).thenComparingInt(ExecutorDetails::getEndTask);

    /** defaults.yaml, parsed once. */
    private static final Map<String, Object> DEFAULTS = Utils.readDefaultConfig();

    private Fixtures() {
    }

    /** A spout emitting "word" on the default stream and on "other-stream". */
    static class WordSpout extends BaseRichSpout {
        @Override
        public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        }

        @Override
        public void nextTuple() {
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer declarer) {
            declarer.declare(new Fields("word"));
            declarer.declareStream("other-stream", new Fields("word"));
        }
    }

    /** A bolt emitting "word". */
    static class WordBolt extends BaseRichBolt {
        @Override
        public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        }

        @Override
        public void execute(Tuple input) {
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer declarer) {
            declarer.declare(new Fields("word"));
        }
    }

    /** A trivial INimbus, like Storm's own scheduler tests use. */
    static class TestNimbus implements INimbus {
        @Override
        public void prepare(Map<String, Object> topoConf, String schedulerLocalDir) {
        }

        @Override
        public Collection<WorkerSlot> allSlotsAvailableForScheduling(Collection<SupervisorDetails> existingSupervisors,
                                                                     Topologies topologies,
                                                                     java.util.Set<String> topologiesMissingAssignments) {
            return null;
        }

        @Override
        public void assignSlots(Topologies topologies, Map<String, Collection<WorkerSlot>> newSlotsByTopologyId) {
        }

        @Override
        public String getHostName(Map<String, SupervisorDetails> existingSupervisors, String nodeId) {
            SupervisorDetails sd = existingSupervisors.get(nodeId);
            return sd == null ? null : sd.getHost();
        }

        @Override
        public IScheduler getForcedScheduler() {
            return null;
        }
    }

    /** spout(2) -shuffle-> bolt(2). */
    static StormTopology simpleTopology() {
        TopologyBuilder builder = new TopologyBuilder();
        builder.setSpout("spout", new WordSpout(), 2);
        builder.setBolt("bolt", new WordBolt(), 2).shuffleGrouping("spout");
        return builder.createTopology();
    }

    /** The full topology configuration (defaults.yaml plus overrides), as Nimbus stores it. */
    static Map<String, Object> topoConf(String name, int workers, Object... keyValues) {
        Map<String, Object> conf = new HashMap<>(DEFAULTS);
        conf.put(Config.TOPOLOGY_NAME, name);
        conf.put(Config.TOPOLOGY_WORKERS, workers);
        for (int i = 0; i < keyValues.length; i += 2) {
            conf.put((String) keyValues[i], keyValues[i + 1]);
        }
        return conf;
    }

    /**
     * TopologyDetails with the executors Nimbus computes: tasks from StormCommon.stormTaskInfo (system
     * components included), split into parallelism-hint contiguous executors per component.
     */
    static TopologyDetails topology(String id, StormTopology userTopology, Map<String, Object> conf) throws Exception {
        // what Nimbus does on submit: every component's json_conf gets its topology.tasks
        StormTopology topology = userTopology.deepCopy();
        for (Object comp : StormCommon.allComponents(topology).values()) {
            Map<String, Object> componentConf = StormCommon.componentConf(comp);
            componentConf.put(Config.TOPOLOGY_TASKS, ServerUtils.getComponentParallelism(conf, comp));
            StormCommon.getComponentCommon(comp).set_json_conf(Json.encode(componentConf));
        }
        StormTopology system = StormCommon.systemTopology(conf, topology);
        Map<String, Object> components = StormCommon.allComponents(system);
        Map<Integer, String> taskInfo = StormCommon.stormTaskInfo(topology, conf);
        Map<String, List<Integer>> compToTasks = new TreeMap<>();
        for (Map.Entry<Integer, String> entry : new TreeMap<>(taskInfo).entrySet()) {
            compToTasks.computeIfAbsent(entry.getValue(), k -> new ArrayList<>()).add(entry.getKey());
        }
        Map<ExecutorDetails, String> execToComp = new HashMap<>();
        for (Map.Entry<String, List<Integer>> entry : compToTasks.entrySet()) {
            int executors = Thrift.getParallelismHint(StormCommon.getComponentCommon(components.get(entry.getKey())));
            for (List<Integer> part : Utils.partitionFixed(executors, entry.getValue())) {
                execToComp.put(new ExecutorDetails(part.get(0), part.get(part.size() - 1)), entry.getKey());
            }
        }
        int workers = ((Number) conf.get(Config.TOPOLOGY_WORKERS)).intValue();
        return new TopologyDetails(id, conf, topology, workers, execToComp, 0, "user");
    }

    /** Supervisors sup-0..sup-(n-1) on host-0.., ports 6700.., each with cpu and memory capacity. */
    static Map<String, SupervisorDetails> supervisors(int count, int ports, double cpu, double memoryMb) {
        Map<String, SupervisorDetails> ret = new HashMap<>();
        for (int i = 0; i < count; i++) {
            List<Number> portList = new ArrayList<>();
            for (int p = 0; p < ports; p++) {
                portList.add(6700 + p);
            }
            Map<String, Double> resources = new HashMap<>();
            resources.put(Config.SUPERVISOR_CPU_CAPACITY, cpu);
            resources.put(Config.SUPERVISOR_MEMORY_CAPACITY_MB, memoryMb);
            SupervisorDetails sd = new SupervisorDetails("sup-" + i, "host-" + i, null, portList,
                NormalizedResources.RESOURCE_NAME_NORMALIZER.normalizedResourceMap(resources));
            ret.put(sd.getId(), sd);
        }
        return ret;
    }

    static Map<String, Object> daemonConf() {
        return new HashMap<>(DEFAULTS);
    }

    static Cluster cluster(Map<String, SupervisorDetails> supervisors, Topologies topologies) {
        return new Cluster(new TestNimbus(), new ResourceMetrics(new StormMetricsRegistry()), supervisors,
            new HashMap<>(), topologies, daemonConf());
    }

    /** The next Nimbus round: a fresh Cluster holding the previous round's assignments and statuses. */
    static Cluster nextRound(Cluster previous, Topologies topologies) {
        Map<String, SchedulerAssignment> assignments = previous.getAssignments();
        Cluster next = new Cluster(new TestNimbus(), new ResourceMetrics(new StormMetricsRegistry()),
            previous.getSupervisors(), assignments, topologies, daemonConf());
        next.setStatusMap(new HashMap<>(previous.getStatusMap()));
        return next;
    }

    static List<ExecutorDetails> executors(TopologyDetails td) {
        List<ExecutorDetails> ret = new ArrayList<>(td.getExecutors());
        ret.sort(BY_TASK);
        return ret;
    }

    static ExecutorPlacement placement(TopologyDetails td, ExecutorDetails exec, String supervisor, int port) {
        return new ExecutorPlacement(SnapshotBuilder.executor(exec, td.getComponentFromExecutor(exec)), supervisor, port);
    }

    /** Executors dealt round-robin over the given slots. */
    static List<ExecutorPlacement> roundRobin(TopologyDetails td, WorkerSlot... slots) {
        List<ExecutorPlacement> ret = new ArrayList<>();
        List<ExecutorDetails> execs = executors(td);
        for (int i = 0; i < execs.size(); i++) {
            WorkerSlot slot = slots[i % slots.length];
            ret.add(placement(td, execs.get(i), slot.getNodeId(), slot.getPort()));
        }
        return ret;
    }

    static TopologyPlan place(TopologyDetails td, List<ExecutorPlacement> placements) {
        return new TopologyPlan(td.getId(), Decision.PLACE, placements, "test placement", "test-algo");
    }

    static TopologyPlan decision(TopologyDetails td, Decision decision, String reason) {
        return new TopologyPlan(td.getId(), decision, new ArrayList<>(), reason, "test-algo");
    }

    /** Current executor-to-slot map of a topology. */
    static Map<ExecutorDetails, WorkerSlot> assignment(Cluster cluster, String topologyId) {
        return PlanApplier.current(cluster, topologyId);
    }

    /** Executor-to-slot map of placements. */
    static Map<ExecutorDetails, WorkerSlot> asMap(List<ExecutorPlacement> placements) {
        Map<ExecutorDetails, WorkerSlot> ret = new HashMap<>();
        for (ExecutorPlacement p : placements) {
            ret.put(new ExecutorDetails(p.getExecutor().getTask_start(), p.getExecutor().getTask_end()),
                new WorkerSlot(p.getSupervisor_id(), p.getPort()));
        }
        return ret;
    }
}
