package io.schedulerpy.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.schedulerpy.storm.thrift.ClusterSnapshot;
import io.schedulerpy.storm.thrift.Decision;
import io.schedulerpy.storm.thrift.ExecutorPlacement;
import io.schedulerpy.storm.thrift.ScheduleReply;
import io.schedulerpy.storm.thrift.TopologyPlan;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class BrainSchedulerTest {
    private static final WorkerSlot S0P0 = new WorkerSlot("sup-0", 6700);
    private static final WorkerSlot S0P1 = new WorkerSlot("sup-0", 6701);
    private static final WorkerSlot S1P0 = new WorkerSlot("sup-1", 6700);
    private static final WorkerSlot S1P1 = new WorkerSlot("sup-1", 6701);

    /** Generous, so a loaded build machine does not turn a good reply into a timeout. */
    private static final int OK_TIMEOUT_MS = 10_000;

    private TopologyDetails topo;
    private Topologies topologies;
    private Cluster cluster;

    /** Counts slot assignments and frees made after construction. */
    static final class CountingCluster extends Cluster {
        private boolean armed;
        int assigns;
        int frees;
        int statusWrites;

        CountingCluster(Cluster src) {
            super(src);
            armed = true;
        }

        @Override
        public void assign(WorkerSlot slot, String topologyId, Collection<ExecutorDetails> executors) {
            if (armed) {
                assigns++;
            }
            super.assign(slot, topologyId, executors);
        }

        @Override
        public void freeSlot(WorkerSlot slot) {
            if (armed) {
                frees++;
            }
            super.freeSlot(slot);
        }

        @Override
        public void setStatus(String topologyId, String statusMessage) {
            if (armed) {
                statusWrites++;
            }
            super.setStatus(topologyId, statusMessage);
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        // 2 spout + 2 bolt + 2 acker executors; topology.workers = 2
        topo = Fixtures.topology("topo-1", Fixtures.simpleTopology(), Fixtures.topoConf("topo", 2));
        topologies = new Topologies(topo);
        cluster = Fixtures.cluster(Fixtures.supervisors(2, 2, 400.0, 4096.0), topologies);
    }

    private static BrainScheduler scheduler(int port, int timeoutMs) {
        return scheduler(port, timeoutMs, true);
    }

    private static BrainScheduler scheduler(int port, int timeoutMs, boolean enabled) {
        Map<String, Object> conf = Fixtures.daemonConf();
        conf.put(BrainConfig.HOST, "127.0.0.1");
        conf.put(BrainConfig.PORT, port);
        conf.put(BrainConfig.TIMEOUT_MS, timeoutMs);
        conf.put(BrainConfig.ENABLED, enabled);
        BrainScheduler scheduler = new BrainScheduler();
        scheduler.prepare(conf, null);
        return scheduler;
    }

    private static ScheduleReply reply(TopologyPlan... plans) {
        return new ScheduleReply(new ArrayList<>(Arrays.asList(plans)), "test-brain 0");
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static void assertFullyAssigned(Cluster cluster, TopologyDetails td) {
        assertTrue(cluster.getUnassignedExecutors(td).isEmpty(), "unassigned: " + cluster.getUnassignedExecutors(td));
    }

    private static Set<WorkerSlot> slots(Cluster cluster, String topologyId) {
        return new HashSet<>(Fixtures.assignment(cluster, topologyId).values());
    }

    private static void assertStatus(Cluster cluster, String topologyId, String... fragments) {
        String status = cluster.getStatus(topologyId);
        for (String fragment : fragments) {
            assertTrue(status != null && status.contains(fragment), "'" + fragment + "' not in status: " + status);
        }
    }

    @Test
    void validPlanIsApplied() throws Exception {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P1, S1P0);
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.place(topo, placements)))) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, cluster);

            assertEquals(Fixtures.asMap(placements), Fixtures.assignment(cluster, "topo-1"));
            assertEquals("Scheduled by scheduler-py brain (algorithm test-algo): test placement", cluster.getStatus("topo-1"));
            ClusterSnapshot snapshot = brain.lastSnapshot();
            assertEquals(1, snapshot.getRound());
            assertEquals(2, snapshot.getSupervisors().size());
            assertTrue(snapshot.getTopologies().get(0).isNeeds_scheduling());
            assertEquals(6, snapshot.getTopologies().get(0).getExecutors().size());
        }
    }

    @Test
    void unchangedPlanIsNotReappliedEvenWithFewerWorkers() throws Exception {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0);
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.place(topo, placements)))) {
            BrainScheduler scheduler = scheduler(brain.port(), OK_TIMEOUT_MS);
            scheduler.schedule(topologies, cluster);
            assertEquals(Fixtures.asMap(placements), Fixtures.assignment(cluster, "topo-1"));

            CountingCluster next = new CountingCluster(Fixtures.nextRound(cluster, topologies));
            assertTrue(next.needsScheduling(topo), "Storm wants 2 workers, the brain used 1");
            scheduler.schedule(topologies, next);

            assertEquals(0, next.assigns, "no slot re-assigned");
            assertEquals(0, next.frees, "no slot freed");
            assertEquals(Fixtures.asMap(placements), Fixtures.assignment(next, "topo-1"));
            assertEquals(2, brain.snapshots().size());
            assertFalse(brain.lastSnapshot().getTopologies().get(0).isNeeds_scheduling(), "settled brain placement");
            assertEquals(2, brain.lastSnapshot().getRound());
        }
    }

    @Test
    void changedPlanIsApplied() throws Exception {
        List<ExecutorPlacement> first = Fixtures.roundRobin(topo, S0P0);
        List<ExecutorPlacement> second = Fixtures.roundRobin(topo, S0P1, S1P1);
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.place(topo, first)))) {
            BrainScheduler scheduler = scheduler(brain.port(), OK_TIMEOUT_MS);
            scheduler.schedule(topologies, cluster);
            brain.answer(s -> reply(Fixtures.place(topo, second)));
            Cluster next = Fixtures.nextRound(cluster, topologies);
            scheduler.schedule(topologies, next);
            assertEquals(Fixtures.asMap(second), Fixtures.assignment(next, "topo-1"));
            assertFalse(next.isSlotOccupied(S0P0));
        }
    }

    @Test
    void settledPlacementIsKeptWhileTheBrainIsDown() throws Exception {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0);
        BrainScheduler scheduler;
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.place(topo, placements)))) {
            scheduler = scheduler(brain.port(), OK_TIMEOUT_MS);
            scheduler.schedule(topologies, cluster);
        }
        CountingCluster next = new CountingCluster(Fixtures.nextRound(cluster, topologies));
        scheduler.schedule(topologies, next);

        assertEquals(0, next.assigns + next.frees, "DefaultScheduler must not spread the brain's 1 worker to 2");
        assertEquals(Fixtures.asMap(placements), Fixtures.assignment(next, "topo-1"));
        assertStatus(next, "topo-1", "Kept the last scheduler-py brain placement", "unreachable");
    }

    @Test
    void unreachableBrainFallsBackToDefaultScheduler() throws Exception {
        int port = closedPort();
        BrainScheduler scheduler = scheduler(port, OK_TIMEOUT_MS);
        scheduler.schedule(topologies, cluster);

        assertFullyAssigned(cluster, topo);
        assertEquals(2, slots(cluster, "topo-1").size(), "DefaultScheduler uses topology.workers slots");
        assertEquals("Fallback to DefaultScheduler: brain at 127.0.0.1:" + port + " unreachable (Connection refused)",
            cluster.getStatus("topo-1"));

        // the next round is quiet and changes nothing: same status, not rewritten
        CountingCluster next = new CountingCluster(Fixtures.nextRound(cluster, topologies));
        scheduler.schedule(topologies, next);
        assertEquals(0, next.assigns + next.frees);
        assertEquals(0, next.statusWrites);
        assertEquals(cluster.getStatus("topo-1"), next.getStatus("topo-1"));
    }

    @Test
    void topologiesCanTradeSlotsInOneRound() throws Exception {
        TopologyDetails other = Fixtures.topology("other-1", Fixtures.simpleTopology(), Fixtures.topoConf("other", 1));
        topologies = new Topologies(topo, other);
        cluster = Fixtures.cluster(Fixtures.supervisors(2, 2, 400.0, 4096.0), topologies);
        cluster.assign(S0P0, "topo-1", new ArrayList<>(topo.getExecutors()));
        cluster.assign(S1P0, "other-1", new ArrayList<>(other.getExecutors()));
        List<ExecutorPlacement> topoPlan = Fixtures.roundRobin(topo, S1P0);
        List<ExecutorPlacement> otherPlan = Fixtures.roundRobin(other, S0P0);
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.place(topo, topoPlan),
            Fixtures.place(other, otherPlan)))) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, cluster);
            assertEquals(Fixtures.asMap(topoPlan), Fixtures.assignment(cluster, "topo-1"));
            assertEquals(Fixtures.asMap(otherPlan), Fixtures.assignment(cluster, "other-1"));
        }
    }

    @Test
    void planForAnUnknownTopologyIsIgnored() throws Exception {
        TopologyPlan ghost = new TopologyPlan("ghost-1", Decision.PLACE, new ArrayList<>(), "boo", "test-algo");
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0);
        try (TestBrainServer brain = new TestBrainServer(s -> reply(ghost, Fixtures.place(topo, placements)))) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, cluster);
            assertEquals(Fixtures.asMap(placements), Fixtures.assignment(cluster, "topo-1"));
            assertStatus(cluster, "topo-1", "Scheduled by scheduler-py brain");
        }
    }

    @Test
    void invalidReplyFallsBackToDefaultScheduler() throws Exception {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0, S1P0);
        ExecutorPlacement first = placements.get(0);
        placements.add(new ExecutorPlacement(first.getExecutor(), "sup-1", 6701)); // double-assigned executor
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.place(topo, placements)))) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, cluster);

            assertFullyAssigned(cluster, topo);
            assertEquals(1, brain.snapshots().size());
            assertStatus(cluster, "topo-1", "Fallback to DefaultScheduler: brain's plan is invalid",
                "placed more than once", "2 times");
        }
    }

    @Test
    void slowBrainTimesOut() throws Exception {
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.place(topo, Fixtures.roundRobin(topo, S0P0))))) {
            brain.delay(8000);
            long start = System.nanoTime();
            scheduler(brain.port(), 300).schedule(topologies, cluster);
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;

            assertTrue(elapsedMs < 6000, "gave up after " + elapsedMs + " ms, not after the 300 ms timeout");
            assertFullyAssigned(cluster, topo);
            assertEquals(2, slots(cluster, "topo-1").size(), "DefaultScheduler's placement, not the brain's");
            assertStatus(cluster, "topo-1", "Fallback to DefaultScheduler", "did not reply within 300 ms");
        }
    }

    @Test
    void brainErrorFallsBack() throws Exception {
        try (TestBrainServer brain = new TestBrainServer(s -> null)) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, cluster);
            assertFullyAssigned(cluster, topo);
            assertStatus(cluster, "topo-1", "Fallback to DefaultScheduler", "could not schedule this round: test brain refuses");
        }
    }

    @Test
    void leaveToStormOnlyAffectsThatTopology() throws Exception {
        TopologyDetails other = Fixtures.topology("other-1", Fixtures.simpleTopology(), Fixtures.topoConf("other", 2));
        topologies = new Topologies(topo, other);
        cluster = Fixtures.cluster(Fixtures.supervisors(2, 3, 400.0, 4096.0), topologies);
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0);
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.place(topo, placements),
            Fixtures.decision(other, Decision.LEAVE_TO_STORM, "no traffic data yet")))) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, cluster);

            assertEquals(Fixtures.asMap(placements), Fixtures.assignment(cluster, "topo-1"),
                "the brain's 1-worker placement is not touched by DefaultScheduler");
            assertFullyAssigned(cluster, other);
            assertEquals(2, slots(cluster, "other-1").size());
            assertFalse(slots(cluster, "other-1").contains(S0P0));
            assertStatus(cluster, "topo-1", "Scheduled by scheduler-py brain");
            assertStatus(cluster, "other-1", "Fallback to DefaultScheduler: brain left it to Storm (no traffic data yet)");
        }
    }

    @Test
    void missingPlanFallsBack() throws Exception {
        try (TestBrainServer brain = new TestBrainServer(s -> reply())) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, cluster);
            assertFullyAssigned(cluster, topo);
            assertStatus(cluster, "topo-1", "Fallback to DefaultScheduler: brain returned no plan for it");
        }
    }

    @Test
    void keptFallbackPlacementKeepsItsFallbackStatusRoundAfterRound() throws Exception {
        cluster.assign(S1P1, "topo-1", new ArrayList<>(topo.getExecutors()));
        cluster.setStatus("topo-1", "Fallback to DefaultScheduler: brain's plan is invalid: test");
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.decision(topo, Decision.KEEP, "keep")))) {
            BrainScheduler scheduler = scheduler(brain.port(), OK_TIMEOUT_MS);
            Cluster round = cluster;
            for (int i = 0; i < 3; i++) {
                scheduler.schedule(topologies, round);
                assertStatus(round, "topo-1", "Fallback to DefaultScheduler: brain's plan is invalid: test");
                round = Fixtures.nextRound(round, topologies);
            }
        }
    }

    @Test
    void keepChangesNothing() throws Exception {
        cluster.assign(S1P1, "topo-1", new ArrayList<>(topo.getExecutors()));
        Map<ExecutorDetails, WorkerSlot> before = Fixtures.assignment(cluster, "topo-1");
        CountingCluster counting = new CountingCluster(cluster);
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.decision(topo, Decision.KEEP, "fine as is")))) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, counting);
            assertEquals(0, counting.assigns + counting.frees);
            assertEquals(before, Fixtures.assignment(counting, "topo-1"));
            assertEquals("Kept its current placement (not made by the brain): fine as is", counting.getStatus("topo-1"));
        }
    }

    @Test
    void keepWithUnassignedExecutorsFallsBack() throws Exception {
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.decision(topo, Decision.KEEP, "lazy")))) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, cluster);
            assertFullyAssigned(cluster, topo);
            assertStatus(cluster, "topo-1", "brain said KEEP, but 6 of 6 executors are unassigned");
        }
    }

    @Test
    void disabledBrainIsPlainDefaultScheduler() throws Exception {
        try (TestBrainServer brain = new TestBrainServer(s -> reply(Fixtures.place(topo, Fixtures.roundRobin(topo, S0P0))))) {
            scheduler(brain.port(), OK_TIMEOUT_MS, false).schedule(topologies, cluster);
            assertTrue(brain.snapshots().isEmpty(), "the brain is never called");
            assertFullyAssigned(cluster, topo);
            assertEquals(2, slots(cluster, "topo-1").size());
            assertStatus(cluster, "topo-1", "scheduler.brain.enabled is false");
        }
    }

    @Test
    void scheduleNeverThrows() throws Exception {
        Cluster broken = new Cluster(cluster) {
            @Override
            public Map<String, List<String>> getNetworkTopography() {
                throw new IllegalStateException("boom");
            }
        };
        try (TestBrainServer brain = new TestBrainServer(s -> reply())) {
            scheduler(brain.port(), OK_TIMEOUT_MS).schedule(topologies, broken);
            assertFullyAssigned(broken, topo);
            assertStatus(broken, "topo-1", "Fallback to DefaultScheduler", "shim error", "boom");
        }
    }

    @Test
    void configDefaults() {
        BrainConfig config = new BrainScheduler().getConfig();
        assertEquals("127.0.0.1", config.getHost());
        assertEquals(9627, config.getPort());
        assertEquals(2000, config.getTimeoutMs());
        assertTrue(config.isEnabled());
        Map<String, Object> conf = new HashMap<>();
        conf.put(BrainConfig.PORT, "9700");
        conf.put(BrainConfig.TIMEOUT_MS, -5);
        conf.put(BrainConfig.ENABLED, "false");
        BrainConfig parsed = BrainConfig.fromConf(conf);
        assertEquals(9700, parsed.getPort());
        assertEquals(2000, parsed.getTimeoutMs());
        assertFalse(parsed.isEnabled());
        assertNotEquals(null, new BrainScheduler().config());
    }
}
