package io.schedulerpy.storm;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.TopologyDetails;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells operators what happened to each topology in a round: one log line per topology and the
 * topology's scheduler status (shown in the Storm UI).
 *
 * <p>Nimbus schedules every ~10 s, so a line identical to the one logged for the same topology in the
 * previous round goes to DEBUG; a new or changed line goes to WARN (fallbacks) or INFO. The status is
 * only written when it changes ({@link Cluster#setStatus} logs every call at INFO).
 */
public class RoundReporter {
    private static final Logger LOG = LoggerFactory.getLogger(BrainScheduler.class);

    /** Status prefix of topologies placed by the brain. */
    public static final String BRAIN_STATUS = "Scheduled by scheduler-py brain";
    /** Status prefix of topologies handed to DefaultScheduler. */
    public static final String FALLBACK_STATUS = "Fallback to DefaultScheduler";

    private final Map<String, String> lastLines = new HashMap<>();

    /** The brain placed or kept the topology. */
    public void brain(Cluster cluster, TopologyDetails td, String algorithm, String reason, boolean changed, int workers) {
        String algo = algorithm == null || algorithm.isEmpty() ? "?" : algorithm;
        String why = reason == null || reason.isEmpty() ? "no reason given" : reason;
        setStatus(cluster, td, BRAIN_STATUS + " (algorithm " + algo + "): " + why);
        String line = "topology " + name(td) + (changed ? " placed" : " unchanged") + " by scheduler-py brain (algorithm "
            + algo + ", " + workers + " worker(s)): " + why;
        if (changed) {
            remember(td, line);
            LOG.info(line);
        } else {
            log(td, line, false);
        }
    }

    /** The topology went to DefaultScheduler because something failed (logged at WARN). */
    public void fallback(Cluster cluster, TopologyDetails td, String reason, String hint) {
        fallback(cluster, td, reason, hint, true);
    }

    /**
     * The topology went to DefaultScheduler.
     *
     * @param warn true when something failed, false when the brain declined on purpose (logged at INFO)
     */
    public void fallback(Cluster cluster, TopologyDetails td, String reason, String hint, boolean warn) {
        int total = td.getExecutors().size();
        int unassigned = cluster.getUnassignedExecutors(td).size();
        String left = unassigned > 0 ? "; " + unassigned + " of " + total + " executors still unassigned (not enough free slots)" : "";
        setStatus(cluster, td, FALLBACK_STATUS + ": " + reason + left);
        log(td, reason + "; topology " + name(td) + " scheduled by DefaultScheduler" + left + suffix(hint), warn);
    }

    /**
     * The brain kept a placement it did not make (DefaultScheduler's after a fallback, or one
     * made before this Nimbus started). A fallback status stays, so the operator still sees why
     * the topology is not placed by the brain.
     */
    public void adopted(Cluster cluster, TopologyDetails td, String reason) {
        String current = cluster.getStatus(td.getId());
        if (current == null || !current.startsWith(FALLBACK_STATUS)) {
            setStatus(cluster, td, "Kept its current placement (not made by the brain): "
                + (reason == null || reason.isEmpty() ? "no reason given" : reason));
        }
        log(td, "topology " + name(td) + " keeps the placement it has; the brain did not make it", false);
    }

    /** The brain could not be asked, but the topology is still where the brain last put it. */
    public void keptBrainPlacement(Cluster cluster, TopologyDetails td, String reason, String hint) {
        setStatus(cluster, td, "Kept the last scheduler-py brain placement: " + reason);
        log(td, reason + "; topology " + name(td) + " keeps its last brain placement" + suffix(hint), true);
    }

    /** The brain is disabled: plain DefaultScheduler. */
    public void disabled(Cluster cluster, TopologyDetails td) {
        setStatus(cluster, td, "Scheduled by DefaultScheduler: " + BrainConfig.ENABLED + " is false");
        log(td, "topology " + name(td) + " scheduled by DefaultScheduler (" + BrainConfig.ENABLED + " is false)", false);
    }

    /** Forget topologies that are gone. */
    public void retain(Collection<String> topologyIds) {
        lastLines.keySet().retainAll(topologyIds);
    }

    private void log(TopologyDetails td, String line, boolean warn) {
        if (line.equals(lastLines.get(td.getId()))) {
            LOG.debug(line);
            return;
        }
        remember(td, line);
        if (warn) {
            LOG.warn(line);
        } else {
            LOG.info(line);
        }
    }

    private void remember(TopologyDetails td, String line) {
        lastLines.put(td.getId(), line);
    }

    private static void setStatus(Cluster cluster, TopologyDetails td, String status) {
        if (!status.equals(cluster.getStatus(td.getId()))) {
            cluster.setStatus(td.getId(), status);
        }
    }

    private static String suffix(String hint) {
        return hint == null || hint.isEmpty() ? "" : "; " + hint;
    }

    private static String name(TopologyDetails td) {
        return td.getName() == null || td.getName().equals(td.getId()) ? td.getId() : td.getName() + " (" + td.getId() + ")";
    }
}
