"""What the round's speed-ups (docs/evaluation.md) must not change: the nodes a
topology sees, the bound it reports, the collector left on between calls, and the in-process
harness's cluster matching the Java bench's."""

from __future__ import annotations

import gc
import random
import time

import pytest
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TFramedTransportFactory

from scheduler_py.bench import roundtrip_profile
from scheduler_py.model.bound import _collocation_lp, _undirected_pairs, traffic_bound
from scheduler_py.model.budget import UNLIMITED
from scheduler_py.model.errors import InvalidProblemError
from scheduler_py.model.types import Component, Edge, Node, NodeTable, Problem, Topology
from scheduler_py.scheduling.claims import Claims, NodeClaim, Usage
from scheduler_py.scheduling.round import RoundConfig, RoundItem, run_round
from scheduler_py.scheduling.view import storm_view, supervisors_of
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.snapshot import to_state
from scheduler_py.service.wire import wire
from tests.brain_server import port_of, serve_brain
from tests.snapshots import snapshot, supervisor, wordcount
from tests.test_node_table import assert_same_lookups


def _mixed_state(seed: int):
    """Supervisors with free, own and foreign slots and some capacity used; topologies with
    and without running executors."""
    rng = random.Random(seed)
    sups = []
    for i in range(30):
        owners = {}
        for port in (6700, 6701, 6702, 6703):
            owner = rng.choice([None, None, "wc-1", "other-1"])
            if owner:
                owners[port] = owner
        sups.append(
            supervisor(
                f"s{i:02d}",
                owners=owners,
                used_cpu=rng.choice([0.0, 50.0, 390.0]),
                used_memory=rng.choice([0.0, 1000.0]),
                rack=rng.choice([None, "r1", "r2"]),
            )
        )
    running = [(t, t, f"s{rng.randrange(30):02d}", 6700) for t in range(1, 12, 2)]
    topologies = [wordcount("wc-1", current=running), wordcount("wc-2")]
    return to_state(snapshot(sups, topologies))


@pytest.mark.parametrize("seed", range(5))
def test_every_node_is_available_plus_own_usage_minus_claims(seed):
    """The nodes of a view, computed from the definition in scheduling/view.py's docstring,
    whichever supervisors the round's shared :func:`supervisors_of` can answer for alone."""
    state = _mixed_state(seed)
    rng = random.Random(seed)
    claimed = {
        f"s{i:02d}": NodeClaim(rng.choice([0.0, 20.0]), rng.choice([0.0, 256.0]), 1, {6703}, {6702})
        for i in rng.sample(range(30), 8)
    }
    shared = supervisors_of(state)
    for topo in state.topologies:
        view = storm_view(state, topo, claimed, None, shared)
        assert view == storm_view(state, topo, claimed)  # shared or per view: the same
        assert_as_defined(state, topo, claimed, view)


def assert_as_defined(state, topo, claimed, view) -> None:
    """``view``'s nodes and free ports are what scheduling/view.py's docstring defines."""
    own: dict[str, list[float]] = {}
    for run in topo.current:
        acc = own.setdefault(run.supervisor_id, [0.0, 0.0])
        acc[0] += 10.0  # wordcount's declared CPU and memory per executor
        acc[1] += 128.0
    by_id = {n.id: n for n in view.problem.nodes}
    assert list(by_id) == sorted(s.id for s in state.supervisors)
    for sup in state.supervisors:
        claim = claimed.get(sup.id, NodeClaim())
        cpu, memory = own.get(sup.id, (0.0, 0.0))
        ports = {
            s.port
            for s in sup.slots
            if s.topology_id in (None, topo.id)
            or (s.port in claim.released_ports and s.port not in claim.taken_ports)
        } - claim.taken_ports
        assert view.free_ports[sup.id] == tuple(sorted(ports))
        assert by_id[sup.id] == Node(
            sup.id,
            max(0.0, sup.available_cpu + cpu - claim.cpu),
            len(ports),
            max(0.0, sup.available_memory_mb + memory - claim.memory_mb),
            sup.rack or "default-rack",
        )


def _chain(parallelism: int, cpu: float) -> Topology:
    return Topology(
        "t",
        (
            Component("a", parallelism, cpu * parallelism, is_spout=True),
            Component("b", parallelism, cpu * parallelism),
        ),
        (Edge("a", "b", 3.0),),
    )


def test_a_topology_that_fits_one_node_is_bounded_by_its_whole_traffic_as_the_lp_says():
    problem = Problem((Node("n1", 400.0), Node("n2", 100.0)), _chain(8, 20.0))  # 320 ≤ 400
    bound = traffic_bound(problem)
    assert (bound.value, bound.method) == (3.0, "forced cut")
    lp, _, _, _ = _collocation_lp(problem, _undirected_pairs(problem), UNLIMITED)
    assert lp is not None and lp >= 3.0


def test_a_topology_bigger_than_any_node_still_gets_the_lp():
    # 800 > 400: each executor shares a node with at most 3 others, so the LP keeps at most
    # 8·3/2 of the 16 pairs' traffic, below the forced cut (all but the lightest pair)
    problem = Problem((Node("n1", 400.0), Node("n2", 400.0)), _chain(4, 100.0))
    bound = traffic_bound(problem)
    assert bound.method.startswith("lp") and bound.value is not None
    assert bound.value <= 3.0 * 12 / 16 + 1e-6


def test_schedule_pauses_the_collector_and_turns_it_back_on():
    seen = []

    class Watching(BrainHandler):
        def _explain_kept(self, decisions):
            seen.append(gc.isenabled())
            return super()._explain_kept(decisions)

    assert gc.isenabled()
    Watching(RoundConfig("even")).schedule(snapshot([supervisor("s")], [wordcount()]))
    assert seen == [False] and gc.isenabled()


def test_the_collector_runs_between_calls_of_a_kept_connection():
    server, address = serve_brain(BrainHandler(RoundConfig("even")))
    port = port_of(address)
    client = make_client(
        wire().SchedulerBrain,
        "127.0.0.1",
        port,
        timeout=5000,
        trans_factory=TFramedTransportFactory(),
        proto_factory=TBinaryProtocolFactory(),
    )
    try:
        for _ in range(2):
            reply = client.schedule(snapshot([supervisor("s")], [wordcount()]))
            assert reply.plans[0].decision == wire().Decision.PLACE
            time.sleep(0.2)  # the connection stays open, waiting for the next call
            assert gc.isenabled()
    finally:
        client.close()
        server.close()


def test_the_harness_builds_the_java_bench_cluster_and_plans_it():
    snap = roundtrip_profile.cluster_snapshot(1000, 50)
    assert len(snap.supervisors) == 500
    assert {len(s.slots) for s in snap.supervisors} == {4}
    assert len(snap.topologies) == 50 and snap.timeout_ms == 2000
    first = snap.topologies[0]
    counts = {c.id: c.parallelism for c in first.components}
    assert counts == {"words": 2, "split": 8, "count": 10} and first.num_workers == 40
    assert [e.task_start for e in first.executors] == list(range(1, 21))
    times = roundtrip_profile.measure("100x2", 1, None, None)
    assert len(times) == 1 and all(wall > 0 and cpu >= 0 for wall, cpu in times)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("available_cpu", float("nan"), "supervisor s: available_cpu must be a finite number"),
        ("total_memory_mb", 4096, None),  # an int is a number too
        ("total_cpu", True, "supervisor s: total_cpu must be a finite number"),
        ("host", "", "supervisor s: host must be a non-empty string"),
        ("port", -1, "supervisor s: slot port must be a whole number >= 0"),
        ("port", True, "supervisor s: slot port must be a whole number >= 0"),
    ],
)
def test_the_snapshot_is_still_checked_field_by_field(field, value, message):
    sup = supervisor("s")
    if field == "port":
        sup.slots[0].port = value
    else:
        setattr(sup, field, value)
    if message is None:
        assert to_state(snapshot([sup], [])).supervisors[0].total_memory_mb == 4096.0
        return
    with pytest.raises(InvalidProblemError, match=message):
        to_state(snapshot([sup], []))


@pytest.mark.parametrize(("start", "end"), [(True, 1), (2, 1), (-1, 3), (1, 1.0)])
def test_a_malformed_executor_still_rejects_its_topology(start, end):
    topo = wordcount()
    topo.executors[0].task_start, topo.executors[0].task_end = start, end
    state = to_state(snapshot([supervisor("s")], [topo]))
    assert not state.topologies and "task_" in state.rejected["wc-1"]


def _busy_state():
    """Twelve supervisors, some slots held by four running topologies, four new ones."""
    owners = {
        "s00": {6700: "wc-1", 6701: "wc-2"},
        "s01": {6700: "wc-1"},
        "s02": {6702: "wc-3", 6703: "other-1"},
        "s03": {6700: "wc-4"},
    }
    sups = [
        supervisor(f"s{i:02d}", owners=owners.get(f"s{i:02d}"), used_cpu=[0.0, 150.0, 300.0][i % 3])
        for i in range(12)
    ]
    running = {
        "wc-1": [(t, t, "s00" if t % 2 else "s01", 6700) for t in range(1, 12)],
        "wc-2": [(t, t, "s00", 6701) for t in range(1, 12)],
        "wc-3": [(t, t, "s02", 6702) for t in range(1, 6)],  # partly running
        "wc-4": [(t, t, "s03", 6700) for t in range(1, 12)],
    }
    topologies = [wordcount(f"wc-{i}", current=running.get(f"wc-{i}", ())) for i in range(1, 9)]
    return to_state(snapshot(sups, topologies))


def test_each_view_of_a_round_sees_the_nodes_as_defined_after_each_placement():
    """As topology after topology is placed (and the running ones re-placed, releasing their
    slots), the round's shared supervisors and node tables give every view the nodes and ports
    scheduling/view.py defines under the claims so far, the lookups a table computed from
    scratch has, and the plans of a round whose views are each computed alone."""
    state = _busy_state()
    shared = supervisors_of(state)
    met: list[int] = []

    def builder(topo):
        def build(claimed):
            view = storm_view(state, topo, claimed, None, shared)
            assert view == storm_view(state, topo, claimed)
            assert_as_defined(state, topo, claimed, view)
            assert_same_lookups(view.problem.table, NodeTable(tuple(view.problem.nodes)))
            met.append(len(claimed))
            return view

        return build

    config = RoundConfig(keep="never")
    decisions = run_round([RoundItem(t.id, builder(t)) for t in state.topologies], config)
    assert [d.decision for d in decisions] == ["PLACE"] * 8
    assert met[0] == 0 and met[-1] > 2  # later topologies met the claims of earlier ones
    fresh = [
        RoundItem(t.id, lambda claimed, t=t: storm_view(state, t, claimed))
        for t in state.topologies
    ]
    assert [d.placement for d in run_round(fresh, config)] == [d.placement for d in decisions]


def _reference_of_others(records, topology_id):
    """Claims.of_others as it was: every record summed again, in first-record order."""
    total: dict[str, NodeClaim] = {}
    for owner, claims in records.items():
        if owner == topology_id:
            continue
        for node, claim in claims.items():
            acc = total.setdefault(node, NodeClaim())
            acc.cpu += claim.cpu
            acc.memory_mb += claim.memory_mb
            acc.workers += claim.workers
            acc.taken_ports |= claim.taken_ports
            acc.released_ports |= claim.released_ports
    for acc in total.values():
        acc.released_ports -= acc.taken_ports
    return total


@pytest.mark.parametrize("seed", range(4))
def test_the_claims_kept_summed_are_the_claims_summed_again(seed):
    rng = random.Random(seed)
    claims = Claims()
    records: dict[str, dict[str, NodeClaim]] = {}
    nodes = [f"n{i}" for i in range(6)]

    def usage():
        return {
            n: Usage(rng.choice([0.1, 10.0, 33.3]), 128.0, 1, frozenset({rng.choice([1, 2, 3])}))
            for n in rng.sample(nodes, 2)
        }

    handed_out = claims.of_others("t0")
    for index in range(12):
        topology_id = f"t{rng.randrange(14) if index > 8 else index}"  # some record twice
        before, after = usage(), usage()
        claims.record(topology_id, before, after)
        records[topology_id] = claims._by_topology[topology_id]
        for asking in (f"t{index + 1}", topology_id, "t0"):
            assert claims.of_others(asking) == _reference_of_others(records, asking)
    assert handed_out == {}  # what was handed out is never changed
