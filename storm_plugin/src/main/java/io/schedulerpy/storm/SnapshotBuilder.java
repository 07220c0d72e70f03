package io.schedulerpy.storm;

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
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.storm.Config;
import org.apache.storm.daemon.StormCommon;
import org.apache.storm.generated.Bolt;
import org.apache.storm.generated.ComponentCommon;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.generated.Grouping;
import org.apache.storm.generated.SpoutSpec;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.networktopography.DNSToSwitchMapping;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.scheduler.resource.normalization.NormalizedResourceOffer;
import org.apache.storm.utils.Utils;
import org.apache.storm.utils.VersionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Converts what Nimbus knows this round (a {@link Cluster} and its topologies) into the brain's
 * {@link ClusterSnapshot}. It only reads the cluster; it never changes it.
 *
 * <p>Notes on the mapping:
 * <ul>
 *   <li>Supervisors blacklisted this round (BlacklistScheduler) are left out of {@code supervisors};
 *       their slots cannot be assigned. A topology's {@code current} placements may still name them,
 *       so they are listed in {@code blacklisted_supervisors} (id and host), and every blacklisted
 *       host ({@link Cluster#getBlacklistedHosts}) in {@code blacklisted_hosts} (STORM-3507).</li>
 *   <li>A supervisor's slots are the ports Nimbus offers this round: ports of dead workers are hidden
 *       by Nimbus for one round.</li>
 *   <li>Components are those that own executors: the user's spouts and bolts plus Storm's
 *       {@code __acker}, {@code __eventlogger} and {@code __metrics*} bolts. {@code __system} owns no
 *       executor that Nimbus schedules (every worker runs its own), so it is not listed, and inputs
 *       coming from it are dropped. Inputs of system components are those Storm itself wires
 *       ({@link StormCommon#systemTopology}).</li>
 *   <li>The rack is omitted when the host resolves to Storm's {@code /default-rack}.</li>
 *   <li>A supervisor's link capacities are what its {@code supervisor.scheduler.meta} declares
 *       ({@link #HOST_LINK_MBIT}, {@link #RACK_UPLINK_MBIT}); a value that is not a number
 *       above 0 is left out, with one warning per supervisor, key and value.</li>
 * </ul>
 */
public class SnapshotBuilder {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotBuilder.class);

    /** Prefix of the topology configuration keys passed on to the brain. */
    public static final String CONF_PREFIX = "scheduler.";

    /**
     * Topology configuration keys passed on to the brain besides {@link #CONF_PREFIX} ones: those its
     * plans depend on. How Storm routes shuffles ({@code topology.disable.loadaware.messaging}) and
     * how many tuples a spout keeps in flight ({@code topology.max.spout.pending}) decide which
     * placement is fastest (docs/algorithms/throughput-model.md); the brain reads every key listed
     * here (scheduler_py/config/keys.py, category "topology").
     */
    public static final List<String> EXTRA_CONF_KEYS = Collections.unmodifiableList(List.of(
        Config.TOPOLOGY_WORKERS, Config.TOPOLOGY_NAME, Config.TOPOLOGY_ACKER_EXECUTORS,
        Config.TOPOLOGY_MESSAGE_TIMEOUT_SECS, Config.TOPOLOGY_DISABLE_LOADAWARE_MESSAGING,
        Config.TOPOLOGY_MAX_SPOUT_PENDING));

    /** {@code supervisor.scheduler.meta} key: Mbit/s of the supervisor's host link, each way. */
    public static final String HOST_LINK_MBIT = "scheduler.host.link.mbit";

    /** {@code supervisor.scheduler.meta} key: Mbit/s of the supervisor's rack uplink, each way. */
    public static final String RACK_UPLINK_MBIT = "scheduler.rack.uplink.mbit";

    /** Bad link declarations already warned about, so that a round every few seconds warns once. */
    private final Set<String> warnedDeclarations = Collections.synchronizedSet(new HashSet<>());

    private static final Comparator<ExecutorDetails> BY_TASK =
        Comparator.comparingInt(ExecutorDetails::getStartTask).thenComparingInt(ExecutorDetails::getEndTask);

    /**
     * Build the snapshot, with {@code needs_scheduling} exactly as {@link Cluster#needsScheduling}.
     */
    public ClusterSnapshot build(Cluster cluster, Collection<TopologyDetails> topologies, long round, long timestampMs) {
        return build(cluster, topologies, round, timestampMs, Collections.emptySet());
    }

    /**
     * Build the snapshot.
     *
     * @param cluster       the cluster of this round
     * @param topologies    the topologies the brain may place
     * @param round         the round number
     * @param timestampMs   the round's wall-clock time
     * @param settledTopologyIds topologies whose current assignment is the last brain plan applied to them
     *                      and has every executor assigned; they get {@code needs_scheduling = false}
     *                      even when {@link Cluster#needsScheduling} is true because the plan uses fewer
     *                      workers than {@code topology.workers}
     * @return the snapshot
     */
    public ClusterSnapshot build(Cluster cluster, Collection<TopologyDetails> topologies, long round, long timestampMs,
                                 Set<String> settledTopologyIds) {
        ClusterSnapshot snapshot = new ClusterSnapshot();
        snapshot.setRound(round);
        snapshot.setTimestamp_ms(timestampMs);
        snapshot.setSupervisors(supervisors(cluster));
        snapshot.setBlacklisted_supervisors(blacklistedSupervisors(cluster));
        Set<String> blacklistedHosts = cluster.getBlacklistedHosts();
        snapshot.setBlacklisted_hosts(new ArrayList<>(
            blacklistedHosts == null ? Collections.<String>emptySet() : new TreeSet<>(blacklistedHosts)));
        List<TopologyDetails> sorted = new ArrayList<>(topologies);
        sorted.sort(Comparator.comparing(TopologyDetails::getId));
        List<Topology> out = new ArrayList<>(sorted.size());
        for (TopologyDetails td : sorted) {
            out.add(topology(cluster, td, settledTopologyIds.contains(td.getId())));
        }
        snapshot.setTopologies(out);
        String version = stormVersion();
        if (version != null) {
            snapshot.setStorm_version(version);
        }
        return snapshot;
    }

    /** Slot to owning topology id, from every assignment in the cluster. */
    static Map<WorkerSlot, String> slotOwners(Cluster cluster) {
        Map<WorkerSlot, String> owners = new HashMap<>();
        for (Map.Entry<String, SchedulerAssignment> entry : cluster.getAssignments().entrySet()) {
            for (WorkerSlot slot : entry.getValue().getSlots()) {
                owners.put(slot, entry.getKey());
            }
        }
        return owners;
    }

    /** Host to rack, from the cluster's network topography; hosts on the default rack are left out. */
    static Map<String, String> hostToRack(Cluster cluster) {
        Map<String, String> ret = new HashMap<>();
        Map<String, List<String>> topography = cluster.getNetworkTopography();
        if (topography == null) {
            return ret;
        }
        for (Map.Entry<String, List<String>> entry : topography.entrySet()) {
            String rack = entry.getKey();
            if (rack == null || rack.isEmpty() || DNSToSwitchMapping.DEFAULT_RACK.equals(rack) || entry.getValue() == null) {
                continue;
            }
            for (String host : entry.getValue()) {
                ret.put(host, rack);
            }
        }
        return ret;
    }

    /** The supervisors Nimbus blacklisted this round, by id. */
    static List<BlacklistedSupervisor> blacklistedSupervisors(Cluster cluster) {
        List<BlacklistedSupervisor> ret = new ArrayList<>();
        for (SupervisorDetails sd : new TreeMap<>(cluster.getSupervisors()).values()) {
            if (cluster.isBlackListed(sd.getId())) {
                ret.add(new BlacklistedSupervisor(sd.getId(), sd.getHost() == null ? "" : sd.getHost()));
            }
        }
        return ret;
    }

    /**
     * The Mbit/s {@code key} of {@code sd}'s {@code supervisor.scheduler.meta} declares, or null when
     * it declares none or something that is not a finite number above 0 (warned about once).
     */
    Double declaredMbit(SupervisorDetails sd, String key) {
        Object meta = sd.getSchedulerMeta();
        if (!(meta instanceof Map)) {
            return null;
        }
        Object value = ((Map<?, ?>) meta).get(key);
        if (value == null) {
            return null;
        }
        double mbit;
        try {
            mbit = value instanceof Number ? ((Number) value).doubleValue() : Double.parseDouble(value.toString().trim());
        } catch (NumberFormatException e) {
            mbit = Double.NaN;
        }
        if (Double.isFinite(mbit) && mbit > 0) {
            return mbit;
        }
        if (warnedDeclarations.add(sd.getId() + "\u0000" + key + "\u0000" + value)) {
            LOG.warn("supervisor {} (host {}): supervisor.scheduler.meta {} is '{}', expected Mbit/s as a number above 0 "
                    + "(quoted in storm.yaml, e.g. \"1000\"); the brain plans as if it were not declared. "
                    + "Fix it in that supervisor's storm.yaml and restart the supervisor.",
                sd.getId(), sd.getHost(), key, value);
        }
        return null;
    }

    private List<Supervisor> supervisors(Cluster cluster) {
        Map<WorkerSlot, String> owners = slotOwners(cluster);
        Map<String, String> racks = hostToRack(cluster);
        List<Supervisor> ret = new ArrayList<>();
        for (SupervisorDetails sd : new TreeMap<>(cluster.getSupervisors()).values()) {
            if (cluster.isBlackListed(sd.getId())) {
                continue;
            }
            Supervisor sup = new Supervisor();
            sup.setId(sd.getId());
            sup.setHost(sd.getHost() == null ? "" : sd.getHost());
            String rack = sd.getHost() == null ? null : racks.get(sd.getHost());
            if (rack != null) {
                sup.setRack(rack);
            }
            Double hostLink = declaredMbit(sd, HOST_LINK_MBIT);
            if (hostLink != null) {
                sup.setHost_link_mbit(hostLink);
            }
            Double rackUplink = declaredMbit(sd, RACK_UPLINK_MBIT);
            if (rackUplink != null) {
                sup.setRack_uplink_mbit(rackUplink);
            }
            List<Slot> slots = new ArrayList<>();
            Set<Integer> ports = sd.getAllPorts() == null ? Collections.emptySet() : new TreeSet<>(sd.getAllPorts());
            for (Integer port : ports) {
                Slot slot = new Slot();
                slot.setPort(port);
                String owner = owners.get(new WorkerSlot(sd.getId(), port));
                if (owner != null) {
                    slot.setTopology_id(owner);
                }
                slots.add(slot);
            }
            sup.setSlots(slots);
            sup.setTotal_cpu(sd.getTotalCpu());
            sup.setTotal_memory_mb(sd.getTotalMemory());
            NormalizedResourceOffer available = cluster.getAvailableResources(sd);
            sup.setAvailable_cpu(Math.max(0.0, available.getTotalCpu()));
            sup.setAvailable_memory_mb(Math.max(0.0, available.getTotalMemoryMb()));
            ret.add(sup);
        }
        return ret;
    }

    private Topology topology(Cluster cluster, TopologyDetails td, boolean settled) {
        Topology topo = new Topology();
        topo.setId(td.getId());
        topo.setName(td.getName() == null ? td.getId() : td.getName());
        topo.setNum_workers(td.getNumWorkers());
        topo.setComponents(components(td));

        List<ExecutorDetails> execs = new ArrayList<>(td.getExecutors());
        execs.sort(BY_TASK);
        List<Executor> executors = new ArrayList<>(execs.size());
        for (ExecutorDetails exec : execs) {
            executors.add(executor(exec, td.getComponentFromExecutor(exec)));
        }
        topo.setExecutors(executors);

        List<ExecutorPlacement> current = new ArrayList<>();
        SchedulerAssignment assignment = cluster.getAssignmentById(td.getId());
        if (assignment != null) {
            Map<ExecutorDetails, WorkerSlot> execToSlot = new TreeMap<>(BY_TASK);
            execToSlot.putAll(assignment.getExecutorToSlot());
            for (Map.Entry<ExecutorDetails, WorkerSlot> entry : execToSlot.entrySet()) {
                String component = td.getComponentFromExecutor(entry.getKey());
                if (component == null) {
                    continue;
                }
                ExecutorPlacement placement = new ExecutorPlacement();
                placement.setExecutor(executor(entry.getKey(), component));
                placement.setSupervisor_id(entry.getValue().getNodeId());
                placement.setPort(entry.getValue().getPort());
                current.add(placement);
            }
        }
        topo.setCurrent(current);
        topo.setNeeds_scheduling(!settled && cluster.needsScheduling(td));
        topo.setConf(conf(td.getConf()));
        return topo;
    }

    static Executor executor(ExecutorDetails exec, String component) {
        Executor ret = new Executor();
        ret.setTask_start(exec.getStartTask());
        ret.setTask_end(exec.getEndTask());
        ret.setComponent(component == null ? "" : component);
        return ret;
    }

    /** The configuration entries passed on to the brain, JSON-encoded. */
    static Map<String, String> conf(Map<String, Object> topoConf) {
        Map<String, String> ret = new TreeMap<>();
        if (topoConf == null) {
            return ret;
        }
        for (Map.Entry<String, Object> entry : topoConf.entrySet()) {
            if (entry.getKey() != null && entry.getKey().startsWith(CONF_PREFIX)) {
                ret.put(entry.getKey(), Json.encode(entry.getValue()));
            }
        }
        for (String key : EXTRA_CONF_KEYS) {
            ret.put(key, Json.encode(topoConf.get(key)));
        }
        return ret;
    }

    private List<Component> components(TopologyDetails td) {
        Map<String, Set<ExecutorDetails>> compToExecs = new TreeMap<>(td.getComponentToExecutors());
        Map<String, ComponentCommon> commons = new HashMap<>();
        Set<String> spouts = new HashSet<>();
        collectComponents(td, commons, spouts);

        List<Component> ret = new ArrayList<>();
        for (Map.Entry<String, Set<ExecutorDetails>> entry : compToExecs.entrySet()) {
            String id = entry.getKey();
            List<ExecutorDetails> execs = new ArrayList<>(entry.getValue());
            execs.sort(BY_TASK);
            ExecutorDetails first = execs.get(0);

            Component comp = new Component();
            comp.setId(id);
            comp.setIs_spout(spouts.contains(id));
            comp.setIs_system(Utils.isSystemId(id));
            comp.setParallelism(execs.size());
            comp.setCpu_per_executor(orZero(td.getTotalCpuReqTask(first)));
            comp.setMemory_mb_per_executor(orZero(td.getTotalMemReqTask(first)));
            comp.setInputs(inputs(commons.get(id), compToExecs.keySet()));
            ret.add(comp);
        }
        return ret;
    }

    /**
     * Fill in every component's {@link ComponentCommon} as Storm wires it at run time (system
     * components and streams included), and the ids of the spouts.
     */
    private void collectComponents(TopologyDetails td, Map<String, ComponentCommon> commons, Set<String> spouts) {
        StormTopology user = td.getTopology();
        if (user == null) {
            return;
        }
        StormTopology full = null;
        try {
            full = StormCommon.systemTopology(td.getConf(), user);
        } catch (Exception | LinkageError e) {
            LOG.debug("Could not build the system topology of {}; using the user topology plus acker inputs", td.getId(), e);
        }
        StormTopology source = full != null ? full : user;
        if (source.get_spouts() != null) {
            for (Map.Entry<String, SpoutSpec> entry : source.get_spouts().entrySet()) {
                commons.put(entry.getKey(), entry.getValue().get_common());
                spouts.add(entry.getKey());
            }
        }
        if (source.get_bolts() != null) {
            for (Map.Entry<String, Bolt> entry : source.get_bolts().entrySet()) {
                commons.put(entry.getKey(), entry.getValue().get_common());
            }
        }
        if (full == null) {
            try {
                ComponentCommon acker = new ComponentCommon();
                acker.set_inputs(StormCommon.ackerInputs(user));
                commons.put(org.apache.storm.daemon.Acker.ACKER_COMPONENT_ID, acker);
            } catch (RuntimeException e) {
                LOG.debug("Could not compute the acker inputs of {}", td.getId(), e);
            }
        }
    }

    private static List<InputStream> inputs(ComponentCommon common, Set<String> knownComponents) {
        List<InputStream> ret = new ArrayList<>();
        if (common == null || common.get_inputs() == null) {
            return ret;
        }
        for (Map.Entry<GlobalStreamId, Grouping> entry : common.get_inputs().entrySet()) {
            String source = entry.getKey().get_componentId();
            if (!knownComponents.contains(source)) {
                // e.g. __system, which owns no scheduled executor
                continue;
            }
            InputStream input = new InputStream();
            input.setComponent(source);
            input.setStream(entry.getKey().get_streamId());
            Grouping grouping = entry.getValue();
            input.setGrouping(groupingType(grouping));
            if (input.getGrouping() == GroupingType.FIELDS) {
                input.setFields(new ArrayList<>(grouping.get_fields()));
            }
            ret.add(input);
        }
        ret.sort(Comparator.comparing(InputStream::getComponent).thenComparing(InputStream::getStream));
        return ret;
    }

    /**
     * Map Storm's {@link Grouping} union to the wire enum. A fields grouping on no field is Storm's
     * global grouping.
     */
    static GroupingType groupingType(Grouping grouping) {
        if (grouping == null || grouping.getSetField() == null) {
            return GroupingType.UNKNOWN;
        }
        switch (grouping.getSetField()) {
            case FIELDS:
                return grouping.get_fields() == null || grouping.get_fields().isEmpty() ? GroupingType.GLOBAL : GroupingType.FIELDS;
            case SHUFFLE:
                return GroupingType.SHUFFLE;
            case LOCAL_OR_SHUFFLE:
                return GroupingType.LOCAL_OR_SHUFFLE;
            case ALL:
                return GroupingType.ALL;
            case NONE:
                return GroupingType.NONE;
            case DIRECT:
                return GroupingType.DIRECT;
            case CUSTOM_OBJECT:
            case CUSTOM_SERIALIZED:
                return GroupingType.CUSTOM;
            default:
                return GroupingType.UNKNOWN;
        }
    }

    private static double orZero(Double value) {
        return value == null || value.isNaN() ? 0.0 : value;
    }

    private static String stormVersion() {
        try {
            return VersionInfo.getVersion();
        } catch (RuntimeException | LinkageError e) {
            return null;
        }
    }
}
