package io.schedulerpy.storm;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.DefaultScheduler;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;

/**
 * Runs Storm's {@link DefaultScheduler} on a subset of the topologies.
 *
 * <p>DefaultScheduler (and the EvenScheduler it calls) ignores the {@link Topologies} it is given and
 * schedules every topology of {@code cluster.needsSchedulingTopologies()}. That would also reshuffle
 * topologies the brain placed on fewer workers than {@code topology.workers} (Storm counts those as
 * needing scheduling). So DefaultScheduler runs on a copy of the cluster that only reports the subset
 * as needing scheduling, and the subset's resulting assignments are copied back.
 */
public class FallbackScheduler {
    private final PlanApplier applier = new PlanApplier();

    /**
     * Schedule the given topologies with DefaultScheduler; all others stay as they are.
     *
     * @param cluster    the cluster to change
     * @param topologies the topologies to schedule
     */
    public void schedule(Cluster cluster, Collection<TopologyDetails> topologies) {
        if (topologies.isEmpty()) {
            return;
        }
        Set<String> ids = new HashSet<>();
        for (TopologyDetails td : topologies) {
            ids.add(td.getId());
        }
        SubsetCluster view = new SubsetCluster(cluster, ids);
        DefaultScheduler.defaultSchedule(new Topologies(topologies.toArray(new TopologyDetails[0])), view);

        Map<String, Map<ExecutorDetails, WorkerSlot>> changed = new HashMap<>();
        for (String id : ids) {
            Map<ExecutorDetails, WorkerSlot> result = PlanApplier.current(view, id);
            if (!result.equals(PlanApplier.current(cluster, id))) {
                changed.put(id, result);
            }
        }
        Map<String, String> failures = applier.apply(cluster, changed);
        if (!failures.isEmpty()) {
            throw new IllegalStateException("could not copy DefaultScheduler's assignments back: " + failures);
        }
    }

    /** A copy of a cluster where only the chosen topologies need scheduling. */
    private static final class SubsetCluster extends Cluster {
        private final Set<String> ids;

        SubsetCluster(Cluster src, Set<String> ids) {
            super(src);
            this.ids = ids;
        }

        @Override
        public List<TopologyDetails> needsSchedulingTopologies() {
            List<TopologyDetails> ret = new ArrayList<>();
            for (TopologyDetails td : super.needsSchedulingTopologies()) {
                if (ids.contains(td.getId())) {
                    ret.add(td);
                }
            }
            return ret;
        }
    }
}
