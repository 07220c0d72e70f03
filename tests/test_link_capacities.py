"""Link capacities the supervisors declare (``supervisor.scheduler.meta``,
``docs/configuration.md``): sent by the shim over Thrift, read into the nodes' ``bandwidth`` and
``rack_uplink``, used by the throughput model, and named in the plan's status."""

from __future__ import annotations

import dataclasses

import pytest
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.utils import deserialize, serialize

from scheduler_py.algorithms.fastest import link_capacities, model_inputs
from scheduler_py.bench.cluster_links import model_topology
from scheduler_py.model.errors import InvalidProblemError
from scheduler_py.model.throughput import throughput
from scheduler_py.model.types import MBIT, Node, Placement, Problem
from scheduler_py.service.snapshot import to_state
from scheduler_py.service.wire import wire
from tests.snapshots import answer, snapshot, supervisor, view_of, wordcount


def _over_the_wire(value):
    """``value`` serialised and read back as the service reads the shim's bytes."""
    factory = TBinaryProtocolFactory()
    return deserialize(wire().ClusterSnapshot(), serialize(value, factory), factory)


def test_declared_capacities_cross_the_wire_into_the_nodes() -> None:
    snap = _over_the_wire(
        snapshot(
            [
                supervisor("s0", rack="/r1", host_link_mbit=100.0, rack_uplink_mbit=50.0),
                supervisor("s1", rack="/r1", host_link_mbit=100.0),
                supervisor("s2", rack="/r2"),
            ],
            [wordcount()],
        )
    )
    state = to_state(snap)
    declared = {s.id: (s.host_link_mbit, s.rack_uplink_mbit) for s in state.supervisors}
    assert declared == {"s0": (100.0, 50.0), "s1": (100.0, None), "s2": (None, None)}
    nodes = {n.id: n for n in view_of(snap).problem.nodes}
    assert nodes["s0"].bandwidth == pytest.approx(100 * MBIT)
    assert nodes["s0"].rack_uplink == pytest.approx(50 * MBIT)
    assert nodes["s2"].bandwidth is None and nodes["s2"].rack_uplink is None


@pytest.mark.parametrize("field", ["host_link_mbit", "rack_uplink_mbit"])
@pytest.mark.parametrize("bad", [0.0, -10.0, float("nan"), float("inf")])
def test_a_capacity_that_is_not_above_zero_is_refused_naming_it(field: str, bad: float) -> None:
    snap = snapshot([supervisor("s0", **{field: bad})], [wordcount()])
    with pytest.raises(InvalidProblemError, match=f"supervisor s0: {field} must be Mbit/s above 0"):
        to_state(snap)


def _diamond(nodes: tuple[Node, ...]) -> Problem:
    topology = model_topology("diamond")
    assert topology is not None
    return Problem(nodes, dataclasses.replace(topology, workers=len(nodes)))


def _round_robin(nodes: tuple[Node, ...]) -> tuple[Problem, Placement]:
    """Diamond on ``nodes``, its executors dealt out in turn (so traffic crosses every link)."""
    problem = _diamond(nodes)
    executors = [e.id for e in problem.topology.executors]
    node_of = {e: nodes[i % len(nodes)].id for i, e in enumerate(executors)}
    return problem, Placement(problem.topology.id, node_of)


def _two_racks(**declared: dict[int, float]) -> tuple[Node, ...]:
    """n0, n1 in /r1 and n2, n3 in /r2, 1 Gbit/s links unless ``declared`` says otherwise
    (``bandwidth``/``rack_uplink``: node index → Mbit/s)."""
    return tuple(
        Node(
            f"n{i}",
            400.0,
            rack="/r1" if i < 2 else "/r2",
            bandwidth=declared.get("bandwidth", {}).get(i, 1000.0) * MBIT,
            rack_uplink=(
                declared["rack_uplink"][i] * MBIT if i in declared.get("rack_uplink", {}) else None
            ),
        )
        for i in range(4)
    )


def test_the_smallest_uplink_a_rack_declares_is_its_capacity() -> None:
    problem, placement = _round_robin(_two_racks(rack_uplink={0: 80.0, 1: 0.05}))
    inputs, _ = model_inputs(problem, True, 1024.0, 0.5, 1000.0)
    assert inputs.rack_uplinks == {"/r1": pytest.approx(0.05 * MBIT)}
    assert inputs.rack_bandwidth == pytest.approx(0.5 * 1000 * MBIT)  # /r2: the share
    assert throughput(problem, placement, inputs).bottleneck in ("/r1 in", "/r1 out")


def test_a_slow_declared_host_link_is_the_bottleneck_of_the_same_plan() -> None:
    rates = {}
    for label, nodes in (
        ("declared fast", _two_racks()),
        ("n2 slow", _two_racks(bandwidth={2: 0.05})),
    ):
        problem, placement = _round_robin(nodes)
        inputs, _ = model_inputs(problem, True, 8192.0, 0.5, 1000.0)
        rates[label] = throughput(problem, placement, inputs)
    assert rates["n2 slow"].rate < rates["declared fast"].rate
    assert rates["n2 slow"].bottleneck in ("n2 in", "n2 out")


def test_the_report_says_whether_the_links_were_declared() -> None:
    one_rack = tuple(Node(f"n{i}", 100.0, bandwidth=100 * MBIT) for i in range(2))
    assert link_capacities(_diamond(one_rack), 1000.0, 0.5) == "host links declared"
    partly = (one_rack[0], Node("n1", 100.0, rack="/r2"))
    assert link_capacities(_diamond(partly), 1000.0, 0.5) == (
        "host links declared on 1 of 2 nodes (the rest: their mean); "
        "rack uplinks not declared (assumed 0.5 of a host link)"
    )
    nothing = tuple(Node(f"n{i}", 100.0) for i in range(2))
    assert link_capacities(_diamond(nothing), 250.0, 0.5) == (
        "host links not declared (assumed 250 Mbit/s)"
    )


def test_storm_status_names_declared_links() -> None:
    from scheduler_py.scheduling.round import RoundConfig

    conf = {"scheduler.brain.algorithm": "throughput"}
    declared = [
        supervisor(f"s{i}", rack="/r1", host_link_mbit=100.0, rack_uplink_mbit=400.0)
        for i in range(3)
    ]
    _, decisions = answer(snapshot(declared, [wordcount(conf=conf)]), RoundConfig())
    assert "host links declared" in decisions[0].reason, decisions[0].reason
    assert dict(decisions[0].summary)["link_capacities"] == "host links declared"
    _, decisions = answer(
        snapshot([supervisor(f"s{i}") for i in range(3)], [wordcount(conf=conf)]), RoundConfig()
    )
    assert "host links not declared (assumed 1000 Mbit/s)" in decisions[0].reason
