package io.schedulerpy.storm;

import io.schedulerpy.storm.thrift.ExecutorPlacement;
import io.schedulerpy.storm.thrift.TopologyPlan;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.WorkerSlot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes executor-to-slot assignments into a {@link Cluster}: frees the slots every changed topology
 * holds now, then assigns each one slot by slot. Freeing everything first lets topologies trade slots
 * in the same round.
 */
public class PlanApplier {
    private static final Logger LOG = LoggerFactory.getLogger(PlanApplier.class);

    private static final Comparator<WorkerSlot> BY_SLOT =
        Comparator.comparing(WorkerSlot::getNodeId).thenComparingInt(WorkerSlot::getPort);

    /**
     * The executor-to-slot map of a plan. Later duplicates win; validate the plan first.
     */
    public static Map<ExecutorDetails, WorkerSlot> toAssignment(TopologyPlan plan) {
        Map<ExecutorDetails, WorkerSlot> ret = new HashMap<>();
        if (plan.getPlacements() == null) {
            return ret;
        }
        for (ExecutorPlacement placement : plan.getPlacements()) {
            ret.put(new ExecutorDetails(placement.getExecutor().getTask_start(), placement.getExecutor().getTask_end()),
                new WorkerSlot(placement.getSupervisor_id(), placement.getPort()));
        }
        return ret;
    }

    /** The topology's current executor-to-slot map in the cluster (empty when it has no assignment). */
    public static Map<ExecutorDetails, WorkerSlot> current(Cluster cluster, String topologyId) {
        SchedulerAssignment assignment = cluster.getAssignmentById(topologyId);
        if (assignment == null) {
            return Collections.emptyMap();
        }
        return new HashMap<>(assignment.getExecutorToSlot());
    }

    /** True when the cluster already assigns exactly {@code desired} to the topology. */
    public static boolean isCurrent(Cluster cluster, String topologyId, Map<ExecutorDetails, WorkerSlot> desired) {
        return current(cluster, topologyId).equals(desired);
    }

    /**
     * Replace the assignments of the given topologies.
     *
     * @param cluster     the cluster to change
     * @param assignments the new executor-to-slot map, by topology id
     * @return the topologies that could not be assigned, with the reason; they are left unassigned
     */
    public Map<String, String> apply(Cluster cluster, Map<String, Map<ExecutorDetails, WorkerSlot>> assignments) {
        Map<String, String> failures = new TreeMap<>();
        Map<String, Map<ExecutorDetails, WorkerSlot>> sorted = new TreeMap<>(assignments);
        for (String topologyId : sorted.keySet()) {
            cluster.unassign(topologyId);
        }
        for (Map.Entry<String, Map<ExecutorDetails, WorkerSlot>> entry : sorted.entrySet()) {
            String topologyId = entry.getKey();
            Map<WorkerSlot, List<ExecutorDetails>> bySlot = new TreeMap<>(BY_SLOT);
            for (Map.Entry<ExecutorDetails, WorkerSlot> placement : entry.getValue().entrySet()) {
                bySlot.computeIfAbsent(placement.getValue(), k -> new ArrayList<>()).add(placement.getKey());
            }
            try {
                for (Map.Entry<WorkerSlot, List<ExecutorDetails>> slot : bySlot.entrySet()) {
                    cluster.assign(slot.getKey(), topologyId, slot.getValue());
                }
            } catch (RuntimeException e) {
                LOG.debug("Could not assign topology {}", topologyId, e);
                failures.put(topologyId, e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
                cluster.unassign(topologyId);
            }
        }
        return failures;
    }
}
