"""Every placement that can reach Storm fits: re-plans, each stage of a staged re-plan and
armed plans (scheduler_py/scheduling/verified.py). The clusters are small cases a search
over random ones found; the checks add up the declared resources themselves."""

from __future__ import annotations

import dataclasses
import json
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping

from scheduler_py.model.cost import evaluate, violations
from scheduler_py.model.slots import restarted_workers
from scheduler_py.model.types import Placement, WorkerSlot
from scheduler_py.reconfig.controller import Controller
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.staging import stage
from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.interfaces import ArmedPlan
from scheduler_py.scheduling.proposal import Proposal, propose, running_placement
from scheduler_py.scheduling.round import RoundConfig, choose_algorithm
from scheduler_py.scheduling.verified import PlanRejected, verify
from scheduler_py.service.snapshot import to_state
from scheduler_py.service.wire import wire
from tests.snapshots import answer, numbered_executors, snapshot, supervisor, view_of

QUICK = TriggerConfig(
    drain_poll_secs=0.001, drain_timeout_secs=1.0, apply_timeout_secs=0.5, warmup_secs=0
)


def chain(
    components: Mapping[str, tuple[int, float]],
    current: Iterable[tuple[int, str, int]] = (),
    workers: int = 4,
    topology_id: str = "t-1",
    conf: Mapping[str, object] | None = None,
):
    """Components (name -> (parallelism, declared CPU per executor)) in a shuffle chain in
    name order, 64 MB each; tasks numbered from 1 in name order, one task per executor;
    ``current``: (task, supervisor, port)."""
    w = wire()
    names = sorted(components)
    built = []
    for i, name in enumerate(names):
        parallelism, cpu = components[name]
        inputs = [w.InputStream(names[i - 1], "default", w.GroupingType.SHUFFLE, None)] if i else []
        built.append(w.Component(name, i == 0, False, parallelism, cpu, 64.0, inputs))
    executors = numbered_executors(built)
    component_of = {e.task_start: e.component for e in executors}
    placed = [
        w.ExecutorPlacement(w.Executor(t, t, component_of[t]), sup, port)
        for t, sup, port in current
    ]
    return w.Topology(
        id=topology_id,
        name=topology_id.split("-")[0],
        num_workers=workers,
        components=built,
        executors=executors,
        current=placed,
        needs_scheduling=not placed,
        conf={k: json.dumps(v) for k, v in (conf or {}).items()},
    )


def cluster(capacity: Mapping[str, float], topologies: list, ports=(6700, 6701, 6702)):
    """Supervisors with ``capacity`` CPU each, Storm's available resources net of what the
    topologies' running executors declare."""
    cpu_used: dict[str, float] = defaultdict(float)
    mem_used: dict[str, float] = defaultdict(float)
    owners: dict[str, dict[int, str]] = defaultdict(dict)
    for topo in topologies:
        declared = {c.id: (c.cpu_per_executor, c.memory_mb_per_executor) for c in topo.components}
        for placed in topo.current:
            cpu, mem = declared[placed.executor.component]
            cpu_used[placed.supervisor_id] += cpu
            mem_used[placed.supervisor_id] += mem
            owners[placed.supervisor_id][placed.port] = topo.id
    return snapshot(
        [
            supervisor(
                sid,
                ports=ports,
                cpu=cap,
                owners=owners[sid],
                used_cpu=cpu_used[sid],
                used_memory=mem_used[sid],
            )
            for sid, cap in capacity.items()
        ],
        topologies,
    )


def declared_load(topo, rows) -> dict[str, float]:
    """supervisor -> the CPU the rows (task_start, task_end, component, supervisor, port)
    declare there."""
    declared = {c.id: c.cpu_per_executor for c in topo.components}
    load: dict[str, float] = defaultdict(float)
    for _, _, component, sup, _ in rows:
        load[sup] += declared[component]
    return dict(load)


class SendingNimbus:
    """Nimbus whose rebalance runs a scheduling round at once (what Storm does for a
    deactivated topology), recording the plan the brain sent for the topology."""

    def __init__(self, snap):
        self.snap = snap
        self.controller = None
        self.sent: list[tuple] = []
        self.state = "ACTIVE"

    def status(self, name):
        return self.state

    def deactivate(self, name):
        self.state = "INACTIVE"

    def activate(self, name):
        self.state = "ACTIVE"

    def rebalance(self, name, wait_secs=0):
        reply, _ = answer(self.snap, RoundConfig(), self.controller.armed())
        for plan in reply.plans:
            if plan.decision == 1:
                self.sent.append(
                    tuple(
                        (
                            p.executor.task_start,
                            p.executor.task_end,
                            p.executor.component,
                            p.supervisor_id,
                            p.port,
                        )
                        for p in plan.placements
                    )
                )

    def assignment(self, name):
        return None

    def sync_supervisor(self, supervisor_id, host, port):
        pass


def _run_replan(tmp_path, snap, name, algorithm):
    nimbus = SendingNimbus(snap)
    controller = Controller(RoundConfig(), QUICK, History(tmp_path), nimbus, sleep=lambda s: None)
    nimbus.controller = controller
    controller.observe_round(to_state(snap), answer(snap, RoundConfig())[1])
    controller.replan(name, algorithm)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        entries = controller.history_of(name)
        if entries and entries[-1].get("state") in ("completed", "rolled_back", "failed"):
            return nimbus, entries[-1]
        time.sleep(0.01)
    raise AssertionError(f"no terminal state: {controller.history_of(name)}")


# a(3 × 10 %) -> b(2 × 30 %) -> c(2 × 30 %) on s1 (60 %), s2, s3, s4 (50 % each); tdls's plan
# restarts 5 of 6 workers, staged in up to 3 stages of at most 3 restarts. The first stage as
# the groups ranked it moved c#1 from s1 onto s2 beside b#0, whose group moves it off s2
# only in a later stage: 60 % on s2.
STAGED = {"a": (3, 10.0), "b": (2, 30.0), "c": (2, 30.0)}
STAGED_CAPACITY = {"s1": 60.0, "s2": 50.0, "s3": 50.0, "s4": 50.0}
STAGED_RUNNING = [
    (1, "s3", 6700),
    (2, "s4", 6700),
    (3, "s4", 6700),
    (4, "s2", 6701),
    (5, "s1", 6700),
    (6, "s3", 6700),
    (7, "s1", 6701),
]


def test_an_operator_replan_never_sends_a_stage_over_capacity(tmp_path):
    topo = chain(STAGED, STAGED_RUNNING, workers=6)
    nimbus, entry = _run_replan(tmp_path, cluster(STAGED_CAPACITY, [topo]), "t", "tdls")
    assert nimbus.sent, entry
    for rows in nimbus.sent:
        load = declared_load(topo, rows)
        over = {s: c for s, c in load.items() if c > STAGED_CAPACITY[s] + 1e-9}
        assert not over, f"sent a plan over capacity: {over} ({entry})"
        assert len({(sup, port) for *_, sup, port in rows}) <= 6
    recorded = declared_load(topo, entry["storm_placement"])
    assert all(c <= STAGED_CAPACITY[s] + 1e-9 for s, c in recorded.items()), recorded


def occupied(snap, reply) -> dict[str, float]:
    """supervisor -> declared CPU after the round: PLACE plans as answered, every other
    topology where it runs."""
    topologies = {t.id: t for t in snap.topologies}
    placed = {plan.topology_id: plan for plan in reply.plans if plan.decision == 1}
    load: dict[str, float] = defaultdict(float)
    for topo in snap.topologies:
        declared = {c.id: c.cpu_per_executor for c in topo.components}
        if topo.id in placed:
            rows = [(p.executor.component, p.supervisor_id) for p in placed[topo.id].placements]
        else:
            rows = [(p.executor.component, p.supervisor_id) for p in topo.current]
        for component, sup in rows:
            load[sup] += declared[component]
    assert set(placed) <= set(topologies)
    return dict(load)


def test_an_armed_plan_claims_its_capacity_before_another_topology_is_planned():
    """a-1 (100 %) runs on s2 and its armed plan moves it to s1; b-1 (100 %), new, comes
    first in the snapshot. Both fit s1 (120 %) alone, not together."""
    moved = chain({"a": (1, 100.0)}, [(1, "s2", 6700)], workers=1, topology_id="a-1")
    new = chain({"b": (1, 100.0)}, workers=1, topology_id="b-1")
    capacity = {"s1": 120.0, "s2": 120.0}
    snap = cluster(capacity, [new, moved])
    armed = {"a-1": ArmedPlan("a-1", "td", "re-planned", ((1, 1, "a", "s1", 6700),))}
    reply, decisions = answer(snap, RoundConfig(), armed)
    assert [d.decision for d in decisions] == ["PLACE", "PLACE"], decisions
    assert decisions[1].reason == "re-planned"
    load = occupied(snap, reply)
    assert all(load[s] <= capacity[s] for s in load), load


def test_an_armed_plan_that_does_not_fit_is_not_sent():
    moved = chain({"a": (2, 70.0)}, [(1, "s2", 6700), (2, "s2", 6700)], workers=1)
    snap = cluster({"s1": 120.0, "s2": 150.0}, [moved])
    rows = ((1, 1, "a", "s1", 6700), (2, 2, "a", "s1", 6700))
    _, decisions = answer(snap, RoundConfig(), {"t-1": ArmedPlan("t-1", "td", "x", rows)})
    assert decisions[0].decision == "KEEP", decisions


def test_a_stage_never_uses_more_workers_than_topology_workers():
    """a -> b, and c, d, g, h exchanging nothing; 4 workers allowed and used. The plan (4
    workers) puts a beside b in a new worker, leaving c alone in another (the group of slots
    that gains traffic, restarting 3 workers) and merges d and h (gains nothing). The first
    group alone would run 5 workers, which Storm rejects: the stage takes the second."""
    w = wire()
    inputs = {"b": [w.InputStream("a", "default", w.GroupingType.SHUFFLE, None)]}
    components = [
        w.Component(n, n == "a", False, 1, 10.0, 64.0, inputs.get(n, [])) for n in "abcdgh"
    ]
    executors = [w.Executor(i + 1, i + 1, c.id) for i, c in enumerate(components)]
    task = {c.id: i + 1 for i, c in enumerate(components)}
    running = {"a": ("s1", 6700), "c": ("s1", 6700), "b": ("s2", 6700), "g": ("s2", 6700)}
    running |= {"d": ("s3", 6700), "h": ("s4", 6700)}
    topo = w.Topology(
        id="t-1",
        name="t",
        num_workers=4,
        components=components,
        executors=executors,
        current=[
            w.ExecutorPlacement(w.Executor(task[n], task[n], n), *where)
            for n, where in running.items()
        ],
        needs_scheduling=False,
        conf={"topology.disable.loadaware.messaging": "true"},
    )
    snap = cluster({f"s{i}": 400.0 for i in (1, 2, 3, 4)}, [topo])
    view = view_of(snap)
    planned = {"a": ("s2", 6701), "b": ("s2", 6701), "c": ("s1", 6701), "g": ("s2", 6700)}
    planned |= {"d": ("s3", 6701), "h": ("s3", 6701)}
    slots = {f"{n}#0": WorkerSlot(*where) for n, where in planned.items()}
    placement = Placement(
        "t-1",
        {e: s.node for e, s in slots.items()},
        worker_of={e: s.port for e, s in slots.items()},
        slot_of=slots,
    )
    assert not violations(view.problem, placement)
    whole = Proposal(
        view=view,
        algorithm="crafted",
        placement=placement,
        running=evaluate(view.problem, running_placement(view)),
        candidate=evaluate(view.problem, placement),
        workers_restarted=restarted_workers(view.current_slots, slots),
        workers_stopped=1,
    )
    assert whole.workers_restarted == 4
    first, stages = stage(whole, 0.5)
    used = {(s.node, s.port) for s in first.placement.slot_of.values()}
    assert len(used) <= 4, sorted(used)
    assert not violations(view.problem, first.placement)
    assert stages > 1 and first.workers_restarted == 1  # the merge of d and h


class LightMeasurements:
    """A cost source whose every executor measured :attr:`percent` CPU (declared: 60 %)."""

    percent = 10.0

    def costs_for(self, topology, storm_executor, conf):
        measured = {e.id: self.percent for e in topology.executors}
        return dataclasses.replace(topology, executor_cpu=measured), "measured (test)"

    def aggregate(self, topology_id):
        return None

    def stale(self, aggregate, conf):
        return None

    def connect(self):
        pass

    def close(self):
        pass


def test_a_plan_on_measured_costs_also_fits_what_storm_accounts():
    """a -> b, 60 % declared each, 10 % measured: both fit one 100 % supervisor by their
    measurements, not by what they declare, which Storm accounts and the shim checks; the
    round plans the topology again on its declared costs. (``throughput`` with hosts=all; its
    default, hosts=packed, plans on the declared CPU from the start.)"""
    topo = chain({"a": (1, 60.0), "b": (1, 60.0)}, workers=2)
    capacity = {"s1": 100.0, "s2": 100.0}
    snap = cluster(capacity, [topo])
    uncapped = {"throughput": {"hosts": "all"}}
    reply, decisions = answer(snap, RoundConfig(costs=LightMeasurements(), default_params=uncapped))
    assert decisions[0].decision == "PLACE", decisions[0].reason
    costs = decisions[0].summary["costs"]
    assert costs.startswith("declared (the plan on measured costs did not fit: declared ")
    assert "the plan for topology" not in costs  # the status names the topology already
    load = occupied(snap, reply)
    assert all(load[s] <= capacity[s] for s in load), (load, decisions[0].reason)
    reply, decisions = answer(snap, RoundConfig(costs=LightMeasurements()))
    assert decisions[0].decision == "PLACE", decisions[0].reason
    load = occupied(snap, reply)
    assert all(load[s] <= capacity[s] for s in load), (load, decisions[0].reason)


def test_a_replan_on_measured_costs_also_fits_what_storm_accounts():
    """The same topology running on two supervisors: re-planned on its measurements, tdls
    would put both executors on one; the re-plan is made again on the declared costs, as a
    round does, and says so, rather than being refused."""
    topo = chain({"a": (1, 60.0), "b": (1, 60.0)}, [(1, "s1", 6700), (2, "s2", 6700)], workers=2)
    capacity = {"s1": 100.0, "s2": 100.0}
    view = view_of(cluster(capacity, [topo]), costs=LightMeasurements())
    assert view.costs.startswith("measured")
    proposal = propose(view, "tdls", {})
    assert proposal.view.costs.startswith("declared (the plan on measured costs did not fit")
    load = declared_load(topo, proposal.storm_placement)
    assert all(load[s] <= capacity[s] for s in load), load


def test_the_declared_costs_note_names_the_first_problem_and_counts_the_others():
    """The note goes into Storm's topology status: the first thing the plan on measured costs
    broke and how many more, not the whole rejection (which names the topology again)."""
    from scheduler_py.scheduling.verified import declared_view

    topo = chain({"a": (1, 60.0), "b": (1, 60.0)}, [(1, "s1", 6700), (2, "s2", 6700)], workers=2)
    view = view_of(cluster({"s1": 100.0, "s2": 100.0}, [topo]), costs=LightMeasurements())
    slot = WorkerSlot("s1", 6799)  # not a slot, and both executors' declared 120 % on s1
    executors = sorted(view.problem.topology.executor_by_id)
    placement = Placement(
        view.topology_id, {e: slot.node for e in executors}, slot_of=dict.fromkeys(executors, slot)
    )
    try:
        verify(view, placement)
    except PlanRejected as error:
        rejected = error
    else:
        raise AssertionError("a plan on a port that is not a slot was accepted")
    assert len(rejected.problems) == 2, rejected.problems
    assert str(rejected).startswith("the plan for topology t-1 does not fit: ")
    assert str(rejected).endswith("; ".join(rejected.problems))
    first = rejected.problems[0]
    assert first.startswith("declared resources (as Storm accounts them): node s1: CPU")
    assert rejected.brief == f"{first}; and 1 more"
    note = declared_view(view, rejected).costs
    assert note == f"declared (the plan on measured costs did not fit: {first}; and 1 more)"
    assert PlanRejected("one thing").brief == "one thing"


class MeasuredPerTuple(LightMeasurements):
    """10 % CPU measured per executor and 100 tuples/s from a to b: 1 ms of CPU per tuple."""

    def costs_for(self, topology, storm_executor, conf):
        measured = {e.id: 10.0 for e in topology.executors}
        pairs = {("a#0", "b#0"): 100.0}
        replaced = dataclasses.replace(topology, executor_cpu=measured, pair_traffic=pairs)
        return replaced, "measured (test)"


def test_declared_costs_in_place_of_measured_ones_keep_the_measured_cpu_per_tuple():
    """Storm accounts declared resources, so a plan that breaks them is made again on them;
    what a tuple costs was still measured, and the throughput model scores on that."""
    from scheduler_py.algorithms.fastest import model_inputs
    from scheduler_py.model.throughput import measured_work_seconds
    from scheduler_py.scheduling.verified import declared_view

    topo = chain({"a": (1, 60.0), "b": (1, 60.0)}, [(1, "s1", 6700), (2, "s2", 6700)], workers=2)
    view = view_of(cluster({"s1": 100.0, "s2": 100.0}, [topo]), costs=MeasuredPerTuple())
    measured = measured_work_seconds(view.problem.topology)
    assert measured == {"a": 0.001, "b": 0.001}
    declared = declared_view(view, PlanRejected("a test"))
    topology = declared.problem.topology
    assert not topology.executor_cpu and not topology.pair_traffic  # Storm's accounting
    assert [e.cpu for e in topology.executors] == [60.0, 60.0]
    assert topology.work_seconds == measured  # what a tuple costs
    assert declared.costs.endswith("measured CPU per tuple and edge gains kept")
    _, basis = model_inputs(declared.problem, True, 4096.0, 0.5)
    assert basis == "measured CPU per tuple"


class MeasuredGains(LightMeasurements):
    """a -> b -> c, 10 % CPU measured per executor; b emits 3 tuples per tuple it receives
    (100 tuples/s in, 300 out)."""

    def costs_for(self, topology, storm_executor, conf):
        measured = {e.id: 10.0 for e in topology.executors}
        pairs = {("a#0", "b#0"): 100.0, ("b#0", "c#0"): 300.0}
        replaced = dataclasses.replace(topology, executor_cpu=measured, pair_traffic=pairs)
        return replaced, "measured (test)"


def test_declared_costs_in_place_of_measured_ones_keep_the_measured_edge_gains():
    """The re-plan on the measurements puts a, b and c on one host, which breaks what they
    declare; the plan made again on the declared costs still scores b -> c at the 3 tuples
    per input b was measured to emit (not 1, as the declared, uniform traffic has it), while
    the traffic volumes are the declared ones."""
    from scheduler_py.model.flows import flows
    from scheduler_py.model.throughput import Shape, measured_gains

    topo = chain(
        {"a": (1, 60.0), "b": (1, 60.0), "c": (1, 60.0)},
        [(1, "s1", 6700), (2, "s2", 6700), (3, "s3", 6700)],
        workers=3,
    )
    capacity = {"s1": 100.0, "s2": 100.0, "s3": 100.0}
    view = view_of(cluster(capacity, [topo]), costs=MeasuredGains())
    assert Shape(view.problem.topology).gain == {("a", "b"): 1.0, ("b", "c"): 3.0}
    proposal = propose(view, "tdls", {})
    assert proposal.view.costs.startswith("declared (the plan on measured costs did not fit")
    assert proposal.view.costs.endswith("measured CPU per tuple and edge gains kept")
    topology = proposal.view.problem.topology
    assert not topology.executor_cpu and not topology.pair_traffic  # Storm's accounting
    assert flows(topology) == {("a", "b"): 1.0, ("b", "c"): 1.0}  # declared volumes
    assert topology.edge_gains == {("a", "b"): 1.0, ("b", "c"): 3.0}
    assert measured_gains(topology) == dict(topology.edge_gains)
    assert Shape(topology).gain == {("a", "b"): 1.0, ("b", "c"): 3.0}
    assert topology.has_measured_costs  # its plans are not remembered
    load = declared_load(topo, proposal.storm_placement)
    assert all(load[s] <= capacity[s] for s in load), load


def test_a_replans_algorithm_is_chosen_by_the_round_not_overridden():
    """The controller asks round.choose_algorithm for a re-plan's algorithm: a requested one
    replaces the topology's own, with the service's parameters for it (not the topology's,
    which are for its own algorithm), and locality still learns Storm's routing."""
    conf = {"scheduler.brain.algorithm": "td", "scheduler.brain.params": {"key": "rs"}}
    config = RoundConfig(default_params={"tdls": {"max_rounds": 7}})
    assert choose_algorithm(conf, config) == ("td", {"key": "rs"})
    assert choose_algorithm(conf, config, "td") == ("td", {"key": "rs"})
    assert choose_algorithm(conf, config, "tdls") == ("tdls", {"max_rounds": 7})
    off = conf | {"topology.disable.loadaware.messaging": True}
    assert choose_algorithm(off, config, "locality") == ("locality", {"loadaware": False})


def test_a_plan_on_another_topologys_port_is_rejected_and_its_own_ports_are_not():
    """The running topology ``t-1`` holds s1:6700; ``other-1`` holds s1:6701. A plan for
    ``t-1`` may keep its own port and take a free one, never the other's or a port that is
    not a slot."""
    running = chain({"a": (2, 10.0)}, [(1, "s1", 6700), (2, "s1", 6700)], workers=2)
    other = chain({"b": (1, 10.0)}, [(1, "s1", 6701)], workers=1, topology_id="other-1")
    view = view_of(cluster({"s1": 400.0, "s2": 400.0}, [running, other]))

    def plan(*slots: tuple[str, int]) -> Placement:
        executors = sorted(view.problem.topology.executor_by_id)
        slot_of = {e: WorkerSlot(*slot) for e, slot in zip(executors, slots, strict=True)}
        return Placement(
            view.problem.topology.id, {e: s.node for e, s in slot_of.items()}, slot_of=slot_of
        )

    assert verify(view, plan(("s1", 6700), ("s2", 6702))) == 2
    for bad in (("s1", 6701), ("s2", 6799)):
        try:
            verify(view, plan(("s1", 6700), bad))
        except PlanRejected as rejected:
            assert f"slot(s) {bad[0]}:{bad[1]} are not free for this topology" in str(rejected)
        else:
            raise AssertionError(f"a plan on {bad} was accepted")


class HeavyMeasurements(LightMeasurements):
    """A cost source whose every executor measured 70 % CPU."""

    percent = 70.0


def test_an_armed_plan_made_on_declared_costs_is_checked_on_them():
    """Two executors declaring 40 % each, measured at 70 %: the re-plan puts both on s1, as
    their declared costs allow (what Storm accounts; ``throughput`` under a ``hosts`` cap
    plans on them) although their measurements do not. The round places it, checked on the
    declared costs, instead of refusing it round after round while the topology is paused;
    a plan that breaks the declared costs too is still refused."""
    moved = chain({"a": (2, 40.0)}, [(1, "s1", 6700), (2, "s2", 6700)], workers=1)
    snap = cluster({"s1": 100.0, "s2": 100.0}, [moved])
    rows = ((1, 1, "a", "s1", 6700), (2, 2, "a", "s1", 6700))
    config = RoundConfig(costs=HeavyMeasurements())
    reply, decisions = answer(snap, config, {"t-1": ArmedPlan("t-1", "throughput", "x", rows)})
    assert decisions[0].decision == "PLACE" and decisions[0].reason == "x", decisions
    assert occupied(snap, reply)["s1"] == 80.0
    heavy = chain({"a": (2, 60.0)}, [(1, "s1", 6700), (2, "s2", 6700)], workers=1)
    snap = cluster({"s1": 100.0, "s2": 100.0}, [heavy])
    _, decisions = answer(snap, config, {"t-1": ArmedPlan("t-1", "throughput", "x", rows)})
    assert decisions[0].decision == "KEEP", decisions


def _counting_plans(monkeypatch) -> list[str]:
    """The algorithms :func:`~scheduler_py.algorithms.registry.run` is asked to plan with."""
    from scheduler_py.algorithms import registry

    asked: list[str] = []
    real = registry.run

    def counted(name, problem, params=None, **kwargs):
        asked.append(name)
        return real(name, problem, params, **kwargs)

    monkeypatch.setattr(registry, "run", counted)
    return asked


def test_a_capped_throughput_plan_is_verified_on_the_declared_cpu_it_was_planned_on(monkeypatch):
    """Two executors declaring 40 % each, measured at 70 %: ``throughput``'s default cap
    (``hosts=packed``) packs them onto one supervisor by their declared CPU, as Storm
    accounts it. The round verifies that plan on the declared CPU it was planned on and
    places it, planning once, rather than refusing it on the measured CPU and planning the
    topology again on its declared costs; the status says the CPU capacity was the declared
    one."""
    asked = _counting_plans(monkeypatch)
    topo = chain({"a": (2, 40.0)}, workers=2)
    snap = cluster({"s1": 100.0, "s2": 100.0}, [topo])
    reply, decisions = answer(snap, RoundConfig(costs=HeavyMeasurements()))
    assert decisions[0].decision == "PLACE", decisions[0].reason
    assert asked.count("throughput") == 1, asked
    assert decisions[0].summary["costs"] == "measured (test); CPU capacity as declared"
    assert len(set(occupied(snap, reply))) == 1  # packed, as RAS would
    assert max(occupied(snap, reply).values()) == 80.0  # declared, within 100


def test_a_capped_throughput_replan_is_made_once_on_the_declared_cpu(monkeypatch):
    """The same topology re-planned by the controller's path: one plan, on the declared CPU
    as capacity and the measured CPU per tuple, not a plan refused on the measured CPU and a
    second one on the declared costs."""
    asked = _counting_plans(monkeypatch)
    topo = chain({"a": (2, 40.0)}, [(1, "s1", 6700), (2, "s2", 6700)], workers=2)
    view = view_of(cluster({"s1": 100.0, "s2": 100.0}, [topo]), costs=HeavyMeasurements())
    proposal = propose(view, "throughput", {})
    assert asked.count("throughput") == 1, asked
    assert proposal.view.costs == "measured (test); CPU capacity as declared"
    assert proposal.view.declared is not None  # the declared resources were checked too
    load = declared_load(topo, proposal.storm_placement)
    assert all(cpu <= 100.0 for cpu in load.values()), load
