"""Property (hypothesis): for random clusters, topologies and running placements, every
stage and every armed plan the reconfiguration controller would send to Storm fits the
supervisors' capacity and ``topology.workers`` (scheduler_py/scheduling/verified.py).

A case is a chain topology running somewhere on 2-4 supervisors (over capacity or not),
sometimes beside a new topology that the same round places. The controller proposes what
it would apply — the first stage of a staged plan, or the whole plan — exactly as it does
for a trigger or an operator's ``replan``; the round then answers that armed plan. The
checks add up the declared resources themselves.
"""

from __future__ import annotations

from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.model.errors import SchedulingError
from scheduler_py.reconfig.controller import Controller
from scheduler_py.reconfig.execution import armed_plan
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.snapshot import to_state
from tests.snapshots import answer
from tests.test_verified_plans import chain, cluster

PORTS = (6700, 6701, 6702)


@st.composite
def cases(draw):
    supervisors = draw(st.integers(2, 4))
    capacity = {
        f"s{i}": draw(st.sampled_from([50.0, 60.0, 80.0, 100.0, 150.0]))
        for i in range(1, supervisors + 1)
    }
    names = "abcd"[: draw(st.integers(2, 4))]
    components = {
        n: (draw(st.integers(1, 3)), draw(st.sampled_from([10.0, 20.0, 30.0]))) for n in names
    }
    tasks = sum(p for p, _ in components.values())
    running = [
        (
            t,
            draw(st.sampled_from(sorted(capacity))),
            draw(st.sampled_from(PORTS)),
        )
        for t in range(1, tasks + 1)
    ]
    workers = len({(s, p) for _, s, p in running}) + draw(st.integers(0, 1))
    topology = chain(components, running, workers=workers)
    others = []
    if draw(st.booleans()):
        others.append(chain({"x": (draw(st.integers(1, 2)), 20.0)}, workers=1, topology_id="n-1"))
    algorithm = draw(st.sampled_from(["tdls", "td"]))
    share = draw(st.sampled_from([0.1, 0.25, 0.5]))
    return capacity, topology, others, algorithm, share


def _load(topo, rows) -> dict[str, float]:
    declared = {c.id: c.cpu_per_executor for c in topo.components}
    load: dict[str, float] = defaultdict(float)
    for component, sup in rows:
        load[sup] += declared[component]
    return load


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_what_the_controller_sends_fits(tmp_path_factory, case):
    capacity, topology, others, algorithm, share = case
    snap = cluster(capacity, [*others, topology], ports=PORTS)
    state = to_state(snap)
    controller = Controller(
        RoundConfig(),
        TriggerConfig(max_restart_share=share),
        History(tmp_path_factory.mktemp("history")),
        None,
    )
    controller.observe_round(state, answer(snap, RoundConfig())[1])
    topo = state.topology(topology.id)
    try:
        proposal = controller._propose(state, topo, controller.trigger, algorithm)
    except SchedulingError:
        return  # nothing is sent
    sent = {(s, e): (sup, port) for s, e, _, sup, port in proposal.storm_placement}
    assert set(sent) == {(e.task_start, e.task_end) for e in topology.executors}
    component = {e.task_start: e.component for e in topology.executors}
    stage_load = _load(topology, [(component[s], sup) for (s, _), (sup, _) in sent.items()])
    assert all(c <= capacity[s] + 1e-9 for s, c in stage_load.items()), (stage_load, capacity)
    assert len(set(sent.values())) <= topology.num_workers
    assert {port for _, port in sent.values()} <= set(PORTS)

    armed = {topology.id: armed_plan(proposal)}
    reply, _ = answer(snap, RoundConfig(), armed)
    load: dict[str, float] = defaultdict(float)
    slots: dict[tuple[str, int], set[str]] = defaultdict(set)
    placed = {plan.topology_id: plan for plan in reply.plans if plan.decision == 1}
    assert topology.id in placed  # the armed plan fits the round it was made for
    for topo_value in snap.topologies:
        if topo_value.id in placed:
            rows = [
                (p.executor.component, p.supervisor_id, p.port)
                for p in placed[topo_value.id].placements
            ]
            if topo_value.id == topology.id:
                assert len({(s, p) for _, s, p in rows}) <= topology.num_workers
        else:
            rows = [(p.executor.component, p.supervisor_id, p.port) for p in topo_value.current]
        for sup, c in _load(topo_value, [(c, s) for c, s, _ in rows]).items():
            load[sup] += c
        for _, sup, port in rows:
            slots[(sup, port)].add(topo_value.id)
    assert all(c <= capacity[s] + 1e-9 for s, c in load.items()), (load, capacity)
    assert all(len(owners) == 1 for owners in slots.values()), slots
