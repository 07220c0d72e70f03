package io.schedulerpy.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.schedulerpy.storm.thrift.Decision;
import io.schedulerpy.storm.thrift.Executor;
import io.schedulerpy.storm.thrift.ExecutorPlacement;
import io.schedulerpy.storm.thrift.TopologyPlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class PlanValidatorTest {
    private final PlanValidator validator = new PlanValidator();
    private TopologyDetails topo;
    private TopologyDetails neighbour;
    private Cluster cluster;

    private static final WorkerSlot S0P0 = new WorkerSlot("sup-0", 6700);
    private static final WorkerSlot S0P1 = new WorkerSlot("sup-0", 6701);
    private static final WorkerSlot S1P0 = new WorkerSlot("sup-1", 6700);
    private static final WorkerSlot S1P1 = new WorkerSlot("sup-1", 6701);

    @BeforeEach
    void setUp() throws Exception {
        // 2 spout + 2 bolt + 2 acker executors; topology.workers = 2
        topo = Fixtures.topology("topo-1", Fixtures.simpleTopology(), Fixtures.topoConf("topo", 2));
        neighbour = Fixtures.topology("nb-1", Fixtures.simpleTopology(), Fixtures.topoConf("nb", 1));
        cluster = Fixtures.cluster(Fixtures.supervisors(3, 2, 400.0, 4096.0), new Topologies(topo, neighbour));
        cluster.assign(S1P1, "nb-1", Fixtures.executors(neighbour));
    }

    private List<String> validate(List<ExecutorPlacement> placements) {
        return validator.validate(topo, Fixtures.place(topo, placements), cluster);
    }

    private static void assertProblem(List<String> problems, String... fragments) {
        assertEquals(1, problems.size(), "expected one problem, got " + problems);
        for (String fragment : fragments) {
            assertTrue(problems.get(0).contains(fragment), "'" + fragment + "' not in: " + problems.get(0));
        }
    }

    @Test
    void validPlan() {
        assertEquals(List.of(), validate(Fixtures.roundRobin(topo, S0P0, S1P0)));
    }

    @Test
    void validPlanReusingOwnSlots() {
        cluster.assign(S0P0, "topo-1", Fixtures.executors(topo));
        assertEquals(List.of(), validate(Fixtures.roundRobin(topo, S0P0, S0P1)));
    }

    @Test
    void missingExecutor() {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0, S1P0);
        ExecutorPlacement dropped = placements.remove(placements.size() - 1);
        assertProblem(validate(placements), "1 of 6 executors missing",
            "[" + dropped.getExecutor().getTask_start() + "-" + dropped.getExecutor().getTask_end() + "]",
            dropped.getExecutor().getComponent());
    }

    @Test
    void duplicateExecutor() {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0, S1P0);
        ExecutorPlacement first = placements.get(0);
        placements.add(new ExecutorPlacement(first.getExecutor(), "sup-1", 6700));
        assertProblem(validate(placements), "placed more than once", "2 times", "sup-0:6700", "sup-1:6700");
    }

    @Test
    void unknownExecutor() {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0, S1P0);
        placements.add(new ExecutorPlacement(new Executor(99, 100, "bolt"), "sup-0", 6700));
        assertProblem(validate(placements), "unknown executor", "[99-100] (bolt)", "has 6 executors");
    }

    @Test
    void executorWithWrongComponent() {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0, S1P0);
        ExecutorPlacement first = placements.get(0);
        first.getExecutor().setComponent("not-" + first.getExecutor().getComponent());
        assertProblem(validate(placements), "wrong component");
    }

    @Test
    void unknownSupervisor() {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0, new WorkerSlot("sup-9", 6700));
        assertProblem(validate(placements), "supervisor 'sup-9'", "unknown or dead", "sup-0, sup-1, sup-2");
    }

    @Test
    void blacklistedSupervisor() {
        cluster.blacklistHost("host-1");
        assertProblem(validate(Fixtures.roundRobin(topo, S0P0, S1P0)), "supervisor 'sup-1'", "blacklisted",
            "alive supervisors: sup-0, sup-2");
    }

    @Test
    void portNotASlotOfTheSupervisor() {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0, new WorkerSlot("sup-1", 6702));
        assertProblem(validate(placements), "port(s) [6702]", "supervisor 'sup-1'", "its slots: [6700, 6701]");
    }

    @Test
    void slotOwnedByAnotherTopology() {
        assertProblem(validate(Fixtures.roundRobin(topo, S0P0, S1P1)), "[sup-1:6701]", "held by topology nb-1");
    }

    @Test
    void moreWorkersThanTopologyWorkers() {
        assertProblem(validate(Fixtures.roundRobin(topo, S0P0, S0P1, S1P0)), "uses 3 workers", "topology.workers is 2");
    }

    @Test
    void notAPlacePlan() {
        TopologyPlan keep = Fixtures.decision(topo, Decision.KEEP, "why not");
        assertProblem(validator.validate(topo, keep, cluster), "expected PLACE");
    }

    @Test
    void slotReleasedByAnotherPlanOfTheSameRound() {
        Map<String, TopologyDetails> tds = Map.of("topo-1", topo, "nb-1", neighbour);
        Map<String, TopologyPlan> plans = new HashMap<>();
        plans.put("topo-1", Fixtures.place(topo, Fixtures.roundRobin(topo, S0P0, S1P1)));
        plans.put("nb-1", Fixtures.place(neighbour, Fixtures.roundRobin(neighbour, new WorkerSlot("sup-2", 6700))));
        assertEquals(Map.of(), validator.validateRound(tds, plans, cluster));
    }

    @Test
    void slotNotReleasedWhenTheOtherPlanIsInvalid() {
        Map<String, TopologyDetails> tds = Map.of("topo-1", topo, "nb-1", neighbour);
        Map<String, TopologyPlan> plans = new HashMap<>();
        plans.put("topo-1", Fixtures.place(topo, Fixtures.roundRobin(topo, S0P0, S1P1)));
        List<ExecutorPlacement> nb = Fixtures.roundRobin(neighbour, new WorkerSlot("sup-2", 6700));
        nb.remove(0);
        plans.put("nb-1", Fixtures.place(neighbour, nb));
        Map<String, List<String>> problems = validator.validateRound(tds, plans, cluster);
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get("nb-1").get(0).contains("missing"));
        assertProblem(problems.get("topo-1"), "held by topology nb-1");
    }

    @Test
    void twoPlansClaimingTheSameSlot() {
        Map<String, TopologyDetails> tds = Map.of("topo-1", topo, "nb-1", neighbour);
        Map<String, TopologyPlan> plans = new HashMap<>();
        plans.put("topo-1", Fixtures.place(topo, Fixtures.roundRobin(topo, S0P0, S1P0)));
        plans.put("nb-1", Fixtures.place(neighbour, Fixtures.roundRobin(neighbour, S0P0)));
        Map<String, List<String>> problems = validator.validateRound(tds, plans, cluster);
        assertProblem(problems.get("topo-1"), "[sup-0:6700] also claimed by the plan for topology nb-1");
        assertProblem(problems.get("nb-1"), "[sup-0:6700] also claimed by the plan for topology topo-1");
    }

    @Test
    void applyingAValidPlanPutsExecutorsInTheNamedSlots() {
        List<ExecutorPlacement> placements = Fixtures.roundRobin(topo, S0P0, S1P0);
        cluster.assign(S0P1, "topo-1", new ArrayList<>(topo.getExecutors()));
        Map<ExecutorDetails, WorkerSlot> wanted = PlanApplier.toAssignment(Fixtures.place(topo, placements));
        assertEquals(Map.of(), new PlanApplier().apply(cluster, Map.of("topo-1", wanted)));
        assertEquals(wanted, Fixtures.assignment(cluster, "topo-1"));
        assertTrue(!cluster.isSlotOccupied(S0P1), "the old slot is freed");
        assertTrue(PlanApplier.isCurrent(cluster, "topo-1", wanted));
    }
    /** What the executors of {@code td} declare in total: {cpu, memory MB}. */
    private static double[] declared(TopologyDetails td) {
        double[] total = new double[2];
        for (ExecutorDetails exec : td.getExecutors()) {
            total[0] += td.getTotalCpuReqTask(exec);
            total[1] += td.getTotalMemReqTask(exec);
        }
        return total;
    }

    @Test
    void planOverASupervisorsDeclaredCpu() throws Exception {
        double cpu = declared(topo)[0];
        Cluster small = Fixtures.cluster(Fixtures.supervisors(2, 2, cpu - 10.0, 4096.0), new Topologies(topo));
        List<String> problems = validator.validate(topo, Fixtures.place(topo, Fixtures.roundRobin(topo, S0P0)), small);
        assertProblem(problems, "supervisor 'sup-0'", String.format("CPU %.2f exceeds the %.2f available", cpu, cpu - 10.0));
        assertEquals(List.of(), validator.validate(topo, Fixtures.place(topo, Fixtures.roundRobin(topo, S0P0, S1P0)), small));
    }

    @Test
    void planOverASupervisorsDeclaredMemory() throws Exception {
        double memory = declared(topo)[1];
        Cluster small = Fixtures.cluster(Fixtures.supervisors(2, 2, 400.0, memory - 1.0), new Topologies(topo));
        List<String> problems = validator.validate(topo, Fixtures.place(topo, Fixtures.roundRobin(topo, S0P0)), small);
        assertProblem(problems, "supervisor 'sup-0'", "memory", "exceeds");
    }

    @Test
    void aPlanMayUseWhatItsTopologyUsesThereNow() throws Exception {
        double cpu = declared(topo)[0];
        Cluster full = Fixtures.cluster(Fixtures.supervisors(2, 2, cpu, 4096.0), new Topologies(topo));
        full.assign(S0P0, "topo-1", Fixtures.executors(topo));
        assertEquals(List.of(), validator.validate(topo, Fixtures.place(topo, Fixtures.roundRobin(topo, S0P1)), full));
    }

    @Test
    void twoPlansOfARoundDoubleBookingASupervisor() throws Exception {
        double cpu = declared(topo)[0] + declared(neighbour)[0];
        Cluster shared = Fixtures.cluster(Fixtures.supervisors(2, 2, cpu - 10.0, 4096.0), new Topologies(topo, neighbour));
        Map<String, TopologyDetails> tds = Map.of("topo-1", topo, "nb-1", neighbour);
        Map<String, TopologyPlan> plans = new HashMap<>();
        plans.put("topo-1", Fixtures.place(topo, Fixtures.roundRobin(topo, S0P0)));
        plans.put("nb-1", Fixtures.place(neighbour, Fixtures.roundRobin(neighbour, S0P1)));
        Map<String, List<String>> problems = validator.validateRound(tds, plans, shared);
        assertEquals(List.of("topo-1"), List.copyOf(problems.keySet()), problems.toString());
        assertProblem(problems.get("topo-1"), "supervisor 'sup-0'", "CPU");
        plans.put("topo-1", Fixtures.place(topo, Fixtures.roundRobin(topo, S1P0)));
        assertEquals(Map.of(), validator.validateRound(tds, plans, shared));
    }
}
