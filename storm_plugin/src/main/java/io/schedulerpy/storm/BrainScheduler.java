package io.schedulerpy.storm;

import io.schedulerpy.storm.thrift.ClusterSnapshot;
import io.schedulerpy.storm.thrift.Decision;
import io.schedulerpy.storm.thrift.ScheduleReply;
import io.schedulerpy.storm.thrift.TopologyPlan;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.DefaultScheduler;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.IScheduler;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A drop-in Storm scheduler ({@code storm.scheduler: "io.schedulerpy.storm.BrainScheduler"}) that asks
 * the scheduler-py brain, a Python Thrift service, where to place executors.
 *
 * <p>Every round it sends a {@link ClusterSnapshot} to the brain, validates each returned plan and
 * applies the valid ones. Whatever the brain cannot or will not place goes to Storm's
 * {@code DefaultScheduler}: when the brain is unreachable, too slow, fails or replies garbage (the
 * whole round), and per topology when the plan is missing, invalid or {@code LEAVE_TO_STORM}.
 * {@link #schedule} never throws, so the shim cannot take Nimbus down.
 *
 * <p>A topology whose assignment is still the last plan the brain gave it, with every executor
 * assigned, is "settled": it is not handed to DefaultScheduler when the brain is unavailable, even
 * though Storm's {@link Cluster#needsScheduling} is true when the brain used fewer workers than
 * {@code topology.workers}, and the brain sees {@code needs_scheduling = false} for it.
 */
public class BrainScheduler implements IScheduler {
    private static final Logger LOG = LoggerFactory.getLogger(BrainScheduler.class);

    private final SnapshotBuilder snapshotBuilder = new SnapshotBuilder();
    private final PlanValidator validator = new PlanValidator();
    private final PlanApplier applier = new PlanApplier();
    private final FallbackScheduler fallback = new FallbackScheduler();
    private final RoundReporter reporter = new RoundReporter();

    /** The last assignment the brain decided for each topology (PLACE applied, or KEEP). */
    private final Map<String, Map<ExecutorDetails, WorkerSlot>> brainAssignments = new HashMap<>();
    /** Topologies whose current placement the brain kept but did not make (e.g. after a fallback). */
    private final Set<String> adoptedPlacements = new HashSet<>();

    private BrainConfig config = BrainConfig.fromConf(null);
    private BrainClient client = new BrainClient(config);
    private long round = 0;
    private String lastShimError = null;

    @Override
    public void prepare(Map<String, Object> conf, StormMetricsRegistry metricsRegistry) {
        config = BrainConfig.fromConf(conf);
        client = new BrainClient(config);
        LOG.info("scheduler-py shim ready: {}", config);
        if (config.isEnabled() && config.getKeyFile() == null) {
            LOG.warn("scheduler-py shim: {} is not set, so rounds go unsealed and the brain refuses them unless it runs "
                + "with --allow-unauthenticated-rounds; set it to the brain's shim key file (storm_plugin/README.md, "
                + "\"Who can talk to the brain\")", BrainConfig.KEY_FILE);
        }
    }

    @Override
    public Map<String, Map<String, Double>> config() {
        // Nimbus reads this as per-user resource guarantees (only used by the resource aware scheduler).
        return Collections.emptyMap();
    }

    public BrainConfig getConfig() {
        return config;
    }

    @Override
    public void schedule(Topologies topologies, Cluster cluster) {
        round++;
        try {
            scheduleRound(topologies, cluster);
            lastShimError = null;
        } catch (Throwable t) {
            String error = t.getClass().getName() + ": " + t.getMessage();
            if (!error.equals(lastShimError)) {
                LOG.error("scheduler-py shim failed in round {}; using DefaultScheduler this round", round, t);
            } else {
                LOG.debug("scheduler-py shim failed again in round {}", round, t);
            }
            lastShimError = error;
            emergencyFallback(topologies, cluster, "scheduler-py shim error (" + error + ")");
        }
    }

    private void scheduleRound(Topologies topologies, Cluster cluster) {
        List<TopologyDetails> all = new ArrayList<>(topologies.getTopologies());
        all.sort(Comparator.comparing(TopologyDetails::getId));
        Set<String> ids = new HashSet<>(topologies.getAllIds());
        brainAssignments.keySet().retainAll(ids);
        adoptedPlacements.retainAll(ids);
        reporter.retain(ids);
        if (all.isEmpty()) {
            return;
        }

        if (!config.isEnabled()) {
            brainAssignments.clear();
            adoptedPlacements.clear();
            DefaultScheduler.defaultSchedule(topologies, cluster);
            for (TopologyDetails td : all) {
                reporter.disabled(cluster, td);
            }
            return;
        }

        Set<String> settled = new HashSet<>();
        for (TopologyDetails td : all) {
            if (isSettled(cluster, td)) {
                settled.add(td.getId());
            }
        }
        ClusterSnapshot snapshot = snapshotBuilder.build(cluster, all, round, Time.currentTimeMillis(), settled);
        snapshot.setTimeout_ms(config.getTimeoutMs());

        ScheduleReply reply;
        try {
            reply = client.schedule(snapshot);
        } catch (BrainCallException e) {
            brainUnavailable(cluster, all, settled, e.getReason(), e.getHint());
            return;
        }
        applyReply(cluster, all, reply);
    }

    /** The whole round falls back, except topologies that are still where the brain put them. */
    private void brainUnavailable(Cluster cluster, List<TopologyDetails> all, Set<String> settled, String reason, String hint) {
        List<TopologyDetails> toFallback = new ArrayList<>();
        for (TopologyDetails td : all) {
            if (!settled.contains(td.getId())) {
                toFallback.add(td);
                brainAssignments.remove(td.getId());
            }
        }
        fallback.schedule(cluster, toFallback);
        for (TopologyDetails td : all) {
            if (settled.contains(td.getId())) {
                reporter.keptBrainPlacement(cluster, td, reason, hint);
            } else {
                reporter.fallback(cluster, td, reason, hint);
            }
        }
    }

    private void applyReply(Cluster cluster, List<TopologyDetails> all, ScheduleReply reply) {
        String brainLog = "see the brain's log";
        Map<String, TopologyDetails> byId = new LinkedHashMap<>();
        for (TopologyDetails td : all) {
            byId.put(td.getId(), td);
        }
        Map<String, TopologyPlan> plans = new HashMap<>();
        Set<String> duplicated = new HashSet<>();
        for (TopologyPlan plan : reply.getPlans() == null ? Collections.<TopologyPlan>emptyList() : reply.getPlans()) {
            if (plan == null || plan.getTopology_id() == null) {
                continue;
            }
            if (!byId.containsKey(plan.getTopology_id())) {
                LOG.debug("Ignoring the brain's plan for topology {}, which is not running", plan.getTopology_id());
                continue;
            }
            if (plans.put(plan.getTopology_id(), plan) != null) {
                duplicated.add(plan.getTopology_id());
            }
        }

        Map<String, Fallback> fallbackReasons = new TreeMap<>();
        Map<String, TopologyPlan> placePlans = new TreeMap<>();
        List<TopologyPlan> kept = new ArrayList<>();
        for (TopologyDetails td : all) {
            String id = td.getId();
            TopologyPlan plan = plans.get(id);
            if (duplicated.contains(id)) {
                fallbackReasons.put(id, new Fallback("brain returned more than one plan for it", brainLog));
            } else if (plan == null) {
                fallbackReasons.put(id, new Fallback("brain returned no plan for it", brainLog));
            } else if (plan.getDecision() == Decision.LEAVE_TO_STORM) {
                fallbackReasons.put(id, new Fallback("brain left it to Storm (" + text(plan.getReason()) + ")", null, true));
            } else if (plan.getDecision() == Decision.KEEP) {
                int unassigned = cluster.getUnassignedExecutors(td).size();
                if (unassigned > 0) {
                    fallbackReasons.put(id, new Fallback("brain said KEEP, but " + unassigned + " of "
                        + td.getExecutors().size() + " executors are unassigned", brainLog));
                } else {
                    kept.add(plan);
                }
            } else if (plan.getDecision() == Decision.PLACE) {
                placePlans.put(id, plan);
            } else {
                fallbackReasons.put(id, new Fallback("brain returned an unknown decision " + plan.getDecision(), brainLog));
            }
        }

        Map<String, List<String>> problems = validator.validateRound(byId, placePlans, cluster);
        for (Map.Entry<String, List<String>> entry : problems.entrySet()) {
            placePlans.remove(entry.getKey());
            fallbackReasons.put(entry.getKey(), new Fallback("brain's plan is invalid: " + String.join("; ", entry.getValue()),
                "fix the brain's algorithm (" + algorithm(plans.get(entry.getKey())) + "); the shim rejected the whole plan"));
        }

        Map<String, Map<ExecutorDetails, WorkerSlot>> changed = new TreeMap<>();
        Map<String, Map<ExecutorDetails, WorkerSlot>> desired = new TreeMap<>();
        for (Map.Entry<String, TopologyPlan> entry : placePlans.entrySet()) {
            Map<ExecutorDetails, WorkerSlot> assignment = PlanApplier.toAssignment(entry.getValue());
            desired.put(entry.getKey(), assignment);
            if (!PlanApplier.isCurrent(cluster, entry.getKey(), assignment)) {
                changed.put(entry.getKey(), assignment);
            }
        }
        Map<String, String> failures = applier.apply(cluster, changed);
        for (Map.Entry<String, String> entry : failures.entrySet()) {
            placePlans.remove(entry.getKey());
            fallbackReasons.put(entry.getKey(), new Fallback("applying the brain's plan failed (" + entry.getValue() + ")", brainLog));
        }

        List<TopologyDetails> toFallback = new ArrayList<>();
        for (String id : fallbackReasons.keySet()) {
            toFallback.add(byId.get(id));
            brainAssignments.remove(id);
        }
        fallback.schedule(cluster, toFallback);

        for (TopologyPlan plan : kept) {
            TopologyDetails td = byId.get(plan.getTopology_id());
            Map<ExecutorDetails, WorkerSlot> current = PlanApplier.current(cluster, td.getId());
            boolean adopted = brainAssignments.put(td.getId(), current) == null || adoptedPlacements.contains(td.getId());
            if (adopted) {
                adoptedPlacements.add(td.getId());
                // placed by someone else (DefaultScheduler after a fallback, or before a Nimbus
                // restart): the brain accepts it, but it did not choose it
                reporter.adopted(cluster, td, plan.getReason());
            } else {
                reporter.brain(cluster, td, plan.getAlgorithm(), plan.getReason(), false, workers(current));
            }
        }
        for (Map.Entry<String, TopologyPlan> entry : placePlans.entrySet()) {
            TopologyDetails td = byId.get(entry.getKey());
            Map<ExecutorDetails, WorkerSlot> assignment = desired.get(entry.getKey());
            brainAssignments.put(td.getId(), assignment);
            adoptedPlacements.remove(td.getId());
            reporter.brain(cluster, td, entry.getValue().getAlgorithm(), entry.getValue().getReason(),
                changed.containsKey(td.getId()), workers(assignment));
        }
        for (Map.Entry<String, Fallback> entry : fallbackReasons.entrySet()) {
            Fallback why = entry.getValue();
            reporter.fallback(cluster, byId.get(entry.getKey()), why.reason(), why.hint(), !why.declined());
        }
    }

    /** Last resort after an unexpected error: DefaultScheduler for every topology that is not settled. */
    private void emergencyFallback(Topologies topologies, Cluster cluster, String reason) {
        try {
            List<TopologyDetails> toFallback = new ArrayList<>();
            List<TopologyDetails> settled = new ArrayList<>();
            for (TopologyDetails td : topologies.getTopologies()) {
                if (config.isEnabled() && isSettled(cluster, td)) {
                    settled.add(td);
                } else {
                    toFallback.add(td);
                    brainAssignments.remove(td.getId());
                }
            }
            fallback.schedule(cluster, toFallback);
            String hint = "please report this scheduler-py shim bug";
            for (TopologyDetails td : toFallback) {
                reporter.fallback(cluster, td, reason, hint);
            }
            for (TopologyDetails td : settled) {
                reporter.keptBrainPlacement(cluster, td, reason, hint);
            }
        } catch (Throwable t) {
            LOG.error("scheduler-py shim: DefaultScheduler fallback failed too in round {}", round, t);
        }
    }

    /** The topology's assignment is still the brain's last decision for it, with every executor assigned. */
    boolean isSettled(Cluster cluster, TopologyDetails td) {
        Map<ExecutorDetails, WorkerSlot> last = brainAssignments.get(td.getId());
        if (last == null || last.isEmpty()) {
            return false;
        }
        return last.keySet().equals(td.getExecutors()) && PlanApplier.isCurrent(cluster, td.getId(), last);
    }

    /** Round counter, for tests. */
    long getRound() {
        return round;
    }

    private static int workers(Map<ExecutorDetails, WorkerSlot> assignment) {
        return new HashSet<>(assignment.values()).size();
    }

    private static String text(String reason) {
        return reason == null || reason.isEmpty() ? "no reason given" : reason;
    }

    private static String algorithm(TopologyPlan plan) {
        return plan == null || plan.getAlgorithm() == null || plan.getAlgorithm().isEmpty() ? "?" : plan.getAlgorithm();
    }

    /** Why a topology goes to DefaultScheduler, and what an operator can do about it. */
    private record Fallback(String reason, String hint, boolean declined) {
        Fallback(String reason, String hint) {
            this(reason, hint, false);
        }
    }
}
