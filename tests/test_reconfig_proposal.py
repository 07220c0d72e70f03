"""Re-plans of running topologies: churn-minimal mapping, evaluation, armed plans."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scheduler_py.algorithms import fastest
from scheduler_py.cli.operator import render_report
from scheduler_py.model.cost import evaluate
from scheduler_py.model.slots import relabel_nodes, restarted_workers
from scheduler_py.model.types import (
    Component,
    Edge,
    Node,
    Placement,
    Problem,
    Topology,
    WorkerSlot,
)
from scheduler_py.reconfig.execution import armed_plan
from scheduler_py.scheduling.interfaces import ArmedPlan
from scheduler_py.scheduling.proposal import propose, running_placement
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.scheduling.verified import routed_evaluation
from tests.snapshots import answer, snapshot, supervisor, view_of, wordcount

# task ids: __acker 1-3, count 4-6, split 7-9, spout 10-11; round-robin over 3 workers
SPREAD = [(t, t, f"s{(t - 1) % 3 + 1}", 6700) for t in range(1, 12)]


def _cluster(topology):
    owners = {6700: topology.id}
    return snapshot([supervisor(f"s{i}", owners=owners) for i in (1, 2, 3)], [topology])


def test_relabel_keeps_groups_on_the_node_they_run_on():
    topology = Topology(
        "t",
        (Component("a", 2, 20.0), Component("b", 2, 20.0)),
        (Edge("a", "b", 10.0),),
        workers=2,
    )
    nodes = (Node("n1", 100.0, 4), Node("n2", 100.0, 4))
    current = {e: WorkerSlot("n2", 6700) for e in ("a#0", "b#0")} | {
        e: WorkerSlot("n1", 6700) for e in ("a#1", "b#1")
    }
    problem = Problem(nodes, topology)
    # the algorithm put the same groups on the "wrong" labels
    plan = Placement("t", {"a#0": "n1", "b#0": "n1", "a#1": "n2", "b#1": "n2"})
    relabeled = relabel_nodes(problem, plan, current)
    assert dict(relabeled.node_of) == {e: s.node for e, s in current.items()}


def test_relabel_never_moves_a_group_onto_a_node_too_small_for_it():
    topology = Topology("t", (Component("a", 2, 80.0),), (), workers=2)
    nodes = (Node("big", 200.0, 4), Node("small", 50.0, 4))
    problem = Problem(nodes, topology)
    plan = Placement("t", {"a#0": "big", "a#1": "big"})
    current = {"a#0": WorkerSlot("small", 6700), "a#1": WorkerSlot("small", 6700)}
    assert dict(relabel_nodes(problem, plan, current).node_of) == dict(plan.node_of)


def test_propose_consolidates_a_spread_topology_and_counts_restarts():
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    view = view_of(_cluster(topo))
    proposal = propose(view, "td", {})
    assert proposal.running.workers_used == 3
    assert proposal.candidate.workers_used < 3
    assert proposal.candidate.interworker_traffic < proposal.running.interworker_traffic
    assert not proposal.unchanged
    # the consolidated worker restarts (its executor set changes) on a node that runs one of
    # the old workers, in a port the topology does not use now: the supervisor starts it
    # while it kills the old one (model/slots.py, rule 2)
    new_slots = set(proposal.placement.slot_of.values())
    old_slots = set(view.current_slots.values())
    assert not new_slots & old_slots
    assert {s.node for s in new_slots} <= {s.node for s in old_slots}
    assert proposal.workers_restarted == restarted_workers(
        view.current_slots, proposal.placement.slot_of
    )
    report = proposal.report()
    assert report["workers_after"] == proposal.candidate.workers_used
    assert len(report["moves"]) == 11
    assert report["predicted_gain"] > 0


def test_propose_the_running_plan_again_is_unchanged():
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    view = view_of(_cluster(topo))
    first = propose(view, "td", {})
    applied = wordcount(
        current=[(s, e, sup, port) for s, e, _, sup, port in first.storm_placement],
        needs_scheduling=False,
    )
    again = propose(view_of(_cluster(applied)), "td", {})
    assert again.unchanged and again.workers_restarted == 0


def test_running_placement_has_one_worker_per_port():
    topo = wordcount(
        current=[(t, t, "s1", 6700 + t % 2) for t in range(1, 12)], needs_scheduling=False
    )
    view = view_of(_cluster(topo))
    running = running_placement(view)
    assert len({running.worker_key(e) for e in running.node_of}) == 2


def test_an_armed_plan_is_placed_even_though_every_executor_runs():
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    snap = _cluster(topo)
    reply, records = answer(snap, RoundConfig())
    assert reply.plans[0].decision == 3  # KEEP
    placements = tuple((t, t, c, "s1", 6700) for t, c in _components().items())
    armed = {topo.id: ArmedPlan(topo.id, "td", "re-planned", placements)}
    reply, records = answer(snap, RoundConfig(), armed)
    plan = reply.plans[0]
    assert plan.decision == 1 and plan.reason == "re-planned"
    assert {(p.supervisor_id, p.port) for p in plan.placements} == {("s1", 6700)}
    assert records[0].decision == "PLACE"
    # a plan for other executors (the topology changed) is ignored
    stale = {topo.id: ArmedPlan(topo.id, "td", "stale", placements[:-1])}
    reply, _ = answer(snap, RoundConfig(), stale)
    assert reply.plans[0].decision == 3


def _components() -> dict[int, str]:
    topo = wordcount()
    return {e.task_start: e.component for e in topo.executors}


def test_load_aware_routing_scores_each_placement_by_its_own_routing():
    """a(2) -shuffle-> b(2): slices {a#0, b#0} | {a#1, b#1} keep every tuple in its worker when
    Storm routes shuffles locality-first, while the uniform split sends half of them across;
    the split by component sends everything across either way."""
    topology = Topology(
        "t",
        (Component("a", 2, 10.0, is_spout=True), Component("b", 2, 10.0)),
        (Edge("a", "b", 8.0),),
    )
    problem = Problem((Node("n1", 100.0, 2), Node("n2", 100.0, 2)), topology)
    sliced = Placement("t", {"a#0": "n1", "b#0": "n1", "a#1": "n2", "b#1": "n2"})
    split = Placement("t", {"a#0": "n1", "a#1": "n1", "b#0": "n2", "b#1": "n2"})
    routed, uniform = routed_evaluation(problem, sliced, True), evaluate(problem, sliced)
    assert routed.total_traffic > 0
    assert routed.interworker_traffic == 0 and routed.internode_traffic == 0
    assert routed.imc_gain == routed.total_traffic
    assert uniform.interworker_traffic == uniform.total_traffic / 2
    assert routed_evaluation(problem, sliced, False) == uniform
    across = routed_evaluation(problem, split, True)
    assert across.interworker_traffic == across.total_traffic == routed.total_traffic


def test_a_proposal_says_how_it_routed():
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    assert propose(view_of(_cluster(topo)), "td", {}).routing == "loadaware"
    off = wordcount(
        conf={"topology.disable.loadaware.messaging": True},
        current=SPREAD,
        needs_scheduling=False,
    )
    proposal = propose(view_of(_cluster(off)), "td", {})
    assert proposal.routing == "uniform" and proposal.report()["routing"] == "uniform"


def test_an_armed_plan_logs_the_numbers_a_planned_place_logs():
    """bench cluster predicts a re-placed topology's inter-host bytes from the plan log's
    summary (scheduler_py/bench/cluster_runs.py), so the armed PLACE carries one too."""
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    snap = _cluster(topo)
    proposal = propose(view_of(snap), "td", {})
    plan = armed_plan(proposal)
    assert plan.summary["interworker_traffic"] == proposal.candidate.interworker_traffic
    assert plan.summary["costs"] == proposal.view.costs
    assert plan.summary["routing"] == proposal.routing
    _, records = answer(snap, RoundConfig(), {topo.id: plan})
    entry = records[0].log_entry()
    assert entry["decision"] == "PLACE"
    assert entry["summary"]["nodes_used"] == proposal.candidate.nodes_used
    assert entry["summary"]["internode_traffic_loadaware"] is not None
    assert entry["summary"]["user_internode_share_uniform"] is not None


def test_a_throughput_replan_carries_the_model_rates_of_both_placements():
    packed = wordcount(current=[(t, t, "s1", 6700) for t in range(1, 12)], needs_scheduling=False)
    view = view_of(_cluster(packed))
    params = fastest.conf_params({}) | {"hosts": "all"}
    proposal = propose(view, fastest.NAME, params)
    assert proposal.objective == "throughput" and proposal.rates is not None
    assert set(proposal.rates.before) == set(fastest.PAYLOAD_HYPOTHESES)
    running = fastest.predicted_rates(view.problem, running_placement(view).node_of, params)
    assert {s: r.rate for s, r in proposal.rates.before.items()} == {
        s: r.rate for s, r in running.items()
    }
    # all on one supervisor's CPU against a plan that spreads it over three
    assert proposal.rates.ratio > 1.5, proposal.report()
    report = proposal.report()
    assert report["objective"] == "throughput"
    assert report["predicted_throughput_before"] == running[fastest.REPORTED_PAYLOAD].rate
    assert report["bottleneck_before"].startswith("s1 ")  # the test's hosts are its ids
    hosted = replace(proposal, hosts={"s1": "host-a"})
    assert hosted.rates is not None and hosted.report()["bottleneck_before"].startswith("host-a ")
    shown = render_report(report)
    assert "predicted throughput: " in shown and "(bottleneck s1 " in shown, shown
    # a stage of it (a replaced placement) is scored afresh
    staged = replace(proposal, placement=running_placement(view))
    assert staged.rates is not None and staged.rates.ratio == pytest.approx(1.0)
    # another algorithm's re-plan is judged on traffic
    by_td = propose(view, "td", {})
    assert by_td.rates is None and by_td.report()["objective"] == "traffic"
