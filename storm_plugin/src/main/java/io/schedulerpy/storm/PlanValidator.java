package io.schedulerpy.storm;

import io.schedulerpy.storm.thrift.Decision;
import io.schedulerpy.storm.thrift.ExecutorPlacement;
import io.schedulerpy.storm.thrift.TopologyPlan;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.scheduler.resource.normalization.NormalizedResourceOffer;

/**
 * Checks PLACE plans against the cluster before anything is applied. It only reads the cluster.
 *
 * <p>A plan is valid when it places every executor of its topology exactly once (none missing, none
 * twice, none unknown), every slot belongs to a supervisor Nimbus knows, alive and not blacklisted this
 * round, the port is one of that supervisor's slots this round, it uses no more workers than
 * {@code topology.workers}, and every slot is free, already held by the same topology, or released by
 * another topology's valid plan of the same round (and claimed by no other plan).
 *
 * <p>As a last line behind the brain's own verification ({@code scheduler_py/scheduling/verified.py}),
 * the valid plans of a round must also fit the supervisors' declared CPU and memory, accounted as the
 * brain accounts them: on every supervisor, what the plans' executors declare
 * ({@link TopologyDetails#getTotalCpuReqTask}, {@link TopologyDetails#getTotalMemReqTask}, the values
 * {@link SnapshotBuilder} sends) may use Storm's available resources there plus what those topologies'
 * current executors declare there, within the brain's tolerance {@link #TOLERANCE}. When a supervisor
 * is over, the plan adding the most to it is rejected (it keeps its current assignment) and the check
 * runs again.
 *
 * <p>Problems are human-readable: what was expected and what was found.
 */
public class PlanValidator {
    /** At most this many items are listed in one problem. */
    static final int MAX_LISTED = 5;

    /** Absolute tolerance of the capacity comparisons: the brain's {@code EPSILON}
     * ({@code scheduler_py/model/types.py}). */
    static final double TOLERANCE = 1e-9;

    private static final Comparator<ExecutorDetails> BY_TASK =
        Comparator.comparingInt(ExecutorDetails::getStartTask).thenComparingInt(ExecutorDetails::getEndTask);

    /**
     * Validate one plan against the cluster as it is now: slots of other topologies count as taken.
     *
     * @return the problems, empty when the plan is valid
     */
    public List<String> validate(TopologyDetails td, TopologyPlan plan, Cluster cluster) {
        Map<String, List<String>> problems = validateRound(Collections.singletonMap(td.getId(), td),
            Collections.singletonMap(td.getId(), plan), cluster);
        return problems.getOrDefault(td.getId(), Collections.emptyList());
    }

    /**
     * Validate all PLACE plans of a round together, so that one topology may move into slots another
     * topology's plan releases.
     *
     * @param topologies the topologies, by id
     * @param plans      the PLACE plans, by topology id
     * @param cluster    the cluster of this round
     * @return the problems of every invalid plan, by topology id (valid plans are absent)
     */
    public Map<String, List<String>> validateRound(Map<String, TopologyDetails> topologies,
                                                   Map<String, TopologyPlan> plans, Cluster cluster) {
        Map<String, List<String>> problems = new TreeMap<>();
        Map<String, Map<ExecutorDetails, WorkerSlot>> candidates = new TreeMap<>();
        for (Map.Entry<String, TopologyPlan> entry : new TreeMap<>(plans).entrySet()) {
            TopologyDetails td = topologies.get(entry.getKey());
            List<String> found = new ArrayList<>();
            if (td == null) {
                found.add("topology " + entry.getKey() + " is not running");
            } else {
                found.addAll(checkPlan(td, entry.getValue(), cluster));
            }
            if (found.isEmpty()) {
                candidates.put(entry.getKey(), PlanApplier.toAssignment(entry.getValue()));
            } else {
                problems.put(entry.getKey(), found);
            }
        }
        checkSlots(candidates, cluster, problems);
        while (checkResources(topologies, candidates, cluster, problems)) {
            checkSlots(candidates, cluster, problems);
        }
        return problems;
    }

    /** Everything that can be checked on one plan alone. */
    private List<String> checkPlan(TopologyDetails td, TopologyPlan plan, Cluster cluster) {
        List<String> problems = new ArrayList<>();
        if (plan.getDecision() != Decision.PLACE) {
            problems.add("decision is " + plan.getDecision() + ", expected PLACE");
            return problems;
        }
        if (!td.getId().equals(plan.getTopology_id())) {
            problems.add("plan is for topology " + plan.getTopology_id() + ", expected " + td.getId());
            return problems;
        }
        Map<ExecutorDetails, String> known = td.getExecutorToComponent();
        List<ExecutorPlacement> placements = plan.getPlacements() == null ? Collections.emptyList() : plan.getPlacements();

        Map<ExecutorDetails, List<WorkerSlot>> placed = new TreeMap<>(BY_TASK);
        List<String> unknown = new ArrayList<>();
        List<String> wrongComponent = new ArrayList<>();
        Map<String, Integer> unknownSupervisors = new TreeMap<>();
        Map<String, Set<Integer>> badPorts = new TreeMap<>();
        Set<WorkerSlot> slots = new HashSet<>();
        for (ExecutorPlacement placement : placements) {
            if (placement == null || placement.getExecutor() == null || placement.getSupervisor_id() == null) {
                problems.add("a placement has no executor or no supervisor");
                continue;
            }
            ExecutorDetails exec = new ExecutorDetails(placement.getExecutor().getTask_start(),
                placement.getExecutor().getTask_end());
            String component = known.get(exec);
            String named = placement.getExecutor().getComponent();
            if (component == null) {
                unknown.add(execText(exec) + " (" + named + ")");
                continue;
            }
            if (named != null && !named.isEmpty() && !named.equals(component)) {
                wrongComponent.add(execText(exec) + " is named '" + named + "' but belongs to '" + component + "'");
            }
            WorkerSlot slot = new WorkerSlot(placement.getSupervisor_id(), placement.getPort());
            placed.computeIfAbsent(exec, k -> new ArrayList<>()).add(slot);
            slots.add(slot);

            SupervisorDetails sd = cluster.getSupervisorById(slot.getNodeId());
            if (sd == null || cluster.isBlackListed(slot.getNodeId())) {
                unknownSupervisors.merge(slot.getNodeId(), 1, Integer::sum);
            } else if (sd.getAllPorts() == null || !sd.getAllPorts().contains(slot.getPort())) {
                badPorts.computeIfAbsent(slot.getNodeId(), k -> new TreeSet<>()).add(slot.getPort());
            }
        }

        if (!unknown.isEmpty()) {
            problems.add(unknown.size() + " unknown executor(s) placed: " + list(unknown)
                + "; topology " + td.getId() + " has " + known.size() + " executors: " + list(execTexts(known)));
        }
        if (!wrongComponent.isEmpty()) {
            problems.add("executor(s) with the wrong component: " + list(wrongComponent));
        }
        List<String> duplicates = new ArrayList<>();
        for (Map.Entry<ExecutorDetails, List<WorkerSlot>> entry : placed.entrySet()) {
            if (entry.getValue().size() > 1) {
                duplicates.add(execText(entry.getKey()) + " (" + known.get(entry.getKey()) + ") "
                    + entry.getValue().size() + " times, on " + entry.getValue());
            }
        }
        if (!duplicates.isEmpty()) {
            problems.add("executor(s) placed more than once, expected exactly once: " + list(duplicates));
        }
        List<ExecutorDetails> missing = new ArrayList<>();
        for (ExecutorDetails exec : known.keySet()) {
            if (!placed.containsKey(exec)) {
                missing.add(exec);
            }
        }
        if (!missing.isEmpty()) {
            missing.sort(BY_TASK);
            List<String> texts = missing.stream().map(e -> execText(e) + " (" + known.get(e) + ")").collect(Collectors.toList());
            problems.add(missing.size() + " of " + known.size() + " executors missing from the plan: " + list(texts));
        }
        for (Map.Entry<String, Integer> entry : unknownSupervisors.entrySet()) {
            String id = entry.getKey();
            String state = cluster.getSupervisorById(id) == null ? "unknown or dead" : "blacklisted this round";
            problems.add("supervisor '" + id + "' (" + entry.getValue() + " executor(s)) is " + state
                + "; alive supervisors: " + list(aliveSupervisors(cluster)));
        }
        for (Map.Entry<String, Set<Integer>> entry : badPorts.entrySet()) {
            SupervisorDetails sd = cluster.getSupervisorById(entry.getKey());
            problems.add("port(s) " + entry.getValue() + " not a slot of supervisor '" + entry.getKey()
                + "' this round; its slots: " + new TreeSet<>(sd.getAllPorts()));
        }
        int maxWorkers = Math.max(1, td.getNumWorkers());
        if (slots.size() > maxWorkers) {
            problems.add("plan uses " + slots.size() + " workers, but topology.workers is " + td.getNumWorkers());
        }
        return problems;
    }

    /**
     * Cross-plan slot checks, repeated until stable: a plan whose slot is held by a topology that keeps
     * it, or claimed by another plan, is invalid; an invalid plan keeps its topology's current slots,
     * which may in turn invalidate plans that counted on them.
     */
    private void checkSlots(Map<String, Map<ExecutorDetails, WorkerSlot>> candidates, Cluster cluster,
                            Map<String, List<String>> problems) {
        Map<WorkerSlot, String> owners = SnapshotBuilder.slotOwners(cluster);
        boolean changed = true;
        while (changed && !candidates.isEmpty()) {
            changed = false;
            Map<WorkerSlot, Set<String>> claims = new LinkedHashMap<>();
            for (Map.Entry<String, Map<ExecutorDetails, WorkerSlot>> entry : candidates.entrySet()) {
                for (WorkerSlot slot : entry.getValue().values()) {
                    claims.computeIfAbsent(slot, k -> new TreeSet<>()).add(entry.getKey());
                }
            }
            Map<String, List<String>> found = new TreeMap<>();
            for (Map.Entry<String, Map<ExecutorDetails, WorkerSlot>> entry : candidates.entrySet()) {
                String topoId = entry.getKey();
                Map<String, Set<String>> heldBy = new TreeMap<>();
                Map<String, Set<String>> alsoClaimedBy = new TreeMap<>();
                for (WorkerSlot slot : new HashSet<>(entry.getValue().values())) {
                    String owner = owners.get(slot);
                    if (owner != null && !owner.equals(topoId) && !candidates.containsKey(owner)) {
                        heldBy.computeIfAbsent(owner, k -> new TreeSet<>()).add(slot.getId());
                    }
                    for (String other : claims.get(slot)) {
                        if (!other.equals(topoId)) {
                            alsoClaimedBy.computeIfAbsent(other, k -> new TreeSet<>()).add(slot.getId());
                        }
                    }
                }
                List<String> slotProblems = new ArrayList<>();
                heldBy.forEach((owner, slotIds) -> slotProblems.add("slot(s) " + slotIds + " held by topology " + owner
                    + ", which keeps them this round; expected free slots or slots of " + topoId));
                alsoClaimedBy.forEach((other, slotIds) -> slotProblems.add("slot(s) " + slotIds
                    + " also claimed by the plan for topology " + other + "; a slot runs one topology's worker"));
                if (!slotProblems.isEmpty()) {
                    found.put(topoId, slotProblems);
                }
            }
            for (Map.Entry<String, List<String>> entry : found.entrySet()) {
                candidates.remove(entry.getKey());
                problems.computeIfAbsent(entry.getKey(), k -> new ArrayList<>()).addAll(entry.getValue());
                changed = true;
            }
        }
    }

    /**
     * Declared CPU and memory of the valid plans against the supervisors (the class comment). Rejects at
     * most one plan: the one adding the most to the first supervisor over its capacity.
     *
     * @return whether a plan was rejected (the slot checks then run again)
     */
    private boolean checkResources(Map<String, TopologyDetails> topologies,
                                   Map<String, Map<ExecutorDetails, WorkerSlot>> candidates, Cluster cluster,
                                   Map<String, List<String>> problems) {
        Map<String, double[]> allowed = new TreeMap<>();
        Map<String, double[]> needed = new TreeMap<>();
        Map<String, Map<String, double[]>> added = new TreeMap<>();
        for (Map.Entry<String, Map<ExecutorDetails, WorkerSlot>> entry : candidates.entrySet()) {
            TopologyDetails td = topologies.get(entry.getKey());
            for (Map.Entry<ExecutorDetails, WorkerSlot> placed : PlanApplier.current(cluster, entry.getKey()).entrySet()) {
                String node = placed.getValue().getNodeId();
                add(allowed, node, td, placed.getKey(), 1);
                add(added.computeIfAbsent(node, k -> new TreeMap<>()), entry.getKey(), td, placed.getKey(), -1);
            }
            for (Map.Entry<ExecutorDetails, WorkerSlot> placed : entry.getValue().entrySet()) {
                String node = placed.getValue().getNodeId();
                add(needed, node, td, placed.getKey(), 1);
                add(added.computeIfAbsent(node, k -> new TreeMap<>()), entry.getKey(), td, placed.getKey(), 1);
            }
        }
        for (Map.Entry<String, double[]> entry : needed.entrySet()) {
            String node = entry.getKey();
            SupervisorDetails sd = cluster.getSupervisorById(node);
            if (sd == null) {
                continue;
            }
            NormalizedResourceOffer available = cluster.getAvailableResources(sd);
            double[] own = allowed.getOrDefault(node, new double[2]);
            double cpu = Math.max(0.0, available.getTotalCpu()) + own[0];
            double memory = Math.max(0.0, available.getTotalMemoryMb()) + own[1];
            double[] need = entry.getValue();
            boolean cpuOver = need[0] > cpu + TOLERANCE;
            boolean memoryOver = need[1] > memory + TOLERANCE;
            if (!cpuOver && !memoryOver) {
                continue;
            }
            int resource = cpuOver ? 0 : 1;
            String worst = null;
            for (Map.Entry<String, double[]> plan : added.get(node).entrySet()) {
                if (worst == null || plan.getValue()[resource] > added.get(node).get(worst)[resource]) {
                    worst = plan.getKey();
                }
            }
            String what = cpuOver
                ? String.format("CPU %.2f exceeds the %.2f available", need[0], cpu)
                : String.format("memory %.1f MB exceeds the %.1f MB available", need[1], memory);
            candidates.remove(worst);
            problems.computeIfAbsent(worst, k -> new ArrayList<>()).add("supervisor '" + node + "': the round's plans "
                + "declare " + what + " (Storm's available resources plus what the re-planned topologies use there now); "
                + "expected plans within the supervisors' declared capacity");
            return true;
        }
        return false;
    }

    /** Add {@code sign} times the executor's declared CPU and memory to {@code totals[key]}. */
    private static void add(Map<String, double[]> totals, String key, TopologyDetails td, ExecutorDetails exec, int sign) {
        double[] total = totals.computeIfAbsent(key, k -> new double[2]);
        total[0] += sign * orZero(td.getTotalCpuReqTask(exec));
        total[1] += sign * orZero(td.getTotalMemReqTask(exec));
    }

    private static double orZero(Double value) {
        return value == null || value.isNaN() ? 0.0 : value;
    }

    private static List<String> aliveSupervisors(Cluster cluster) {
        List<String> ret = new ArrayList<>();
        for (String id : new TreeSet<>(cluster.getSupervisors().keySet())) {
            if (!cluster.isBlackListed(id)) {
                ret.add(id);
            }
        }
        return ret;
    }

    private static List<String> execTexts(Map<ExecutorDetails, String> known) {
        List<ExecutorDetails> execs = new ArrayList<>(known.keySet());
        execs.sort(BY_TASK);
        return execs.stream().map(e -> execText(e) + " (" + known.get(e) + ")").collect(Collectors.toList());
    }

    static String execText(ExecutorDetails exec) {
        return "[" + exec.getStartTask() + "-" + exec.getEndTask() + "]";
    }

    /** A list, cut after {@link #MAX_LISTED} items. */
    static String list(List<String> items) {
        if (items.size() <= MAX_LISTED) {
            return String.join(", ", items);
        }
        return String.join(", ", items.subList(0, MAX_LISTED)) + " and " + (items.size() - MAX_LISTED) + " more";
    }
}
