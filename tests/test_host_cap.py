"""``throughput``'s ``hosts`` parameter (``scheduler_py/algorithms/host_cap.py``): a plan on
no more nodes than a packing of the declared resources needs, as Storm's ResourceAwareScheduler
packs, or than a given number."""

from __future__ import annotations

import dataclasses

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.fastest import predicted_rates
from scheduler_py.algorithms.host_cap import (
    declared_capacity,
    node_limit,
    packed_plan,
    parse_hosts,
)
from scheduler_py.bench.cluster_links import model_topology
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import MBIT, Node, Problem

CPU_BOUND = {"payload_bytes": 93.0, "host_mbit": 100.0, "max_spout_pending": 1000}
"""the CPU-bound topologies' measured tuple size on the emulated network (``README.md``,
"Evaluation on an emulated network")"""
WORK_SECONDS = 400e-6
"""the CPU-bound topologies' CPU per tuple per user component (``topologies/jvm``)"""
RAS_HOSTS = {"linear-cpu": 3, "diamond-cpu": 5, "star-cpu": 4}
"""hosts Storm's RAS used for them on the emulated hosts
(``docs/results/emulated-network/throughput-default/c2-cpu-staged.json`` and
``c2-cpu-wire-pooled.json``)"""


def _nodes() -> tuple[Node, ...]:
    """The emulated hosts: six of 30 CPU points (Storm's supervisor.cpu.capacity), 100 Mbit/s
    links, two racks with 50 Mbit/s uplinks."""
    return tuple(
        Node(
            f"h{i}",
            30.0,
            slots=4,
            memory_mb=4096.0,
            rack="/rack-1" if i <= 3 else "/rack-2",
            bandwidth=100 * MBIT,
            rack_uplink=50 * MBIT,
        )
        for i in range(1, 7)
    )


def _cpu_bound(label: str) -> Problem:
    topology = model_topology(label)
    assert topology is not None
    work = {c.id: WORK_SECONDS for c in topology.components if not c.is_system}
    return Problem(_nodes(), dataclasses.replace(topology, work_seconds=work, workers=6))


def _nodes_used(node_of: dict[str, str]) -> int:
    return len(set(node_of.values()))


@pytest.mark.parametrize(
    ("value", "count", "packed"),
    [("all", None, False), ("packed", None, True), (" Packed ", None, True), ("3", 3, False)],
)
def test_the_parameter_is_all_packed_or_a_number(value: str, count: int | None, packed: bool):
    cap = parse_hosts(value, "throughput")
    assert (cap.count, cap.packed, cap.capped) == (count, packed, count is not None or packed)


@pytest.mark.parametrize("value", ["0", "-2", "many", "2.5", ""])
def test_anything_else_is_refused_naming_what_was_expected(value: str) -> None:
    with pytest.raises(SchedulingError, match=r"'hosts' must be all, packed or a whole number"):
        parse_hosts(value, "throughput")
    with pytest.raises(SchedulingError, match=r"'hosts' must be"):
        registry.run("throughput", _cpu_bound("linear-cpu"), CPU_BOUND | {"hosts": value})


@pytest.mark.parametrize("label", sorted(RAS_HOSTS))
def test_the_packing_needs_as_many_hosts_as_ras_used(label: str) -> None:
    """10 CPU points declared per executor on 30-point hosts: 9, 13 and 11 executors need 3,
    5 and 4 hosts, the hosts RAS used on the emulated network."""
    problem = _cpu_bound(label)
    packed = packed_plan(problem)
    assert packed is not None and set(packed) == {e.id for e in problem.topology.executors}
    assert _nodes_used(packed) == RAS_HOSTS[label]
    assert node_limit(parse_hosts("packed", "t"), packed, "t") == RAS_HOSTS[label]


def test_a_packing_that_does_not_fit_is_none() -> None:
    problem = _cpu_bound("linear-cpu")
    small = dataclasses.replace(problem, nodes=problem.nodes[:2])
    assert packed_plan(small) is None


@pytest.mark.parametrize("label", sorted(RAS_HOSTS))
def test_packed_plans_on_the_hosts_ras_uses_and_beats_its_placement_there(label: str) -> None:
    """Capped (the default), the plan uses no more hosts than RAS and the model rates it above
    the packed plan, which is RAS's kind of placement; uncapped it spreads wider, faster."""
    problem = _cpu_bound(label)
    capped = registry.run("throughput", problem, CPU_BOUND)
    spread = registry.run("throughput", problem, CPU_BOUND | {"hosts": "all"})
    assert _nodes_used(dict(capped.node_of)) <= RAS_HOSTS[label]
    assert _nodes_used(dict(spread.node_of)) > RAS_HOSTS[label]
    packed = packed_plan(problem)
    assert packed is not None
    rate = capped.report["predicted_throughput"]
    assert rate > next(iter(predicted_rates(problem, packed, CPU_BOUND).values())).rate
    assert spread.report["predicted_throughput"] > rate
    assert "at most" in capped.report["hosts"] and "hosts" not in spread.report
    over = [c for c in capped.report["candidates"].values() if "over_hosts" in c]
    assert all(c["nodes_used"] > RAS_HOSTS[label] for c in over)


def test_ras_recorded_linear_cpu_placement_is_rated_below_the_packed_plan() -> None:
    """RAS's Linear-CPU placement of the tenth set (run 1: one worker on each of three hosts
    of one rack) against the plan on the same number of hosts."""
    problem = _cpu_bound("linear-cpu")
    ras = {
        "__acker#0": "h1",
        "exclaim1#0": "h2",
        "exclaim1#1": "h1",
        "exclaim2#0": "h2",
        "exclaim2#1": "h1",
        "exclaim_output_3#0": "h3",
        "exclaim_output_3#1": "h3",
        "word#0": "h2",
        "word#1": "h3",
    }
    capped = registry.run("throughput", problem, CPU_BOUND | {"hosts": "packed"})
    ras_rate = next(iter(predicted_rates(problem, ras, CPU_BOUND).values())).rate
    assert capped.report["predicted_throughput"] > 1.05 * ras_rate


def test_a_number_caps_the_nodes_and_below_the_packing_is_refused() -> None:
    problem = _cpu_bound("star-cpu")
    four = registry.run("throughput", problem, CPU_BOUND | {"hosts": "5"})
    assert _nodes_used(dict(four.node_of)) <= 5
    assert "at most 5 node(s)" in four.report["hosts"]
    with pytest.raises(SchedulingError, match=r"allows 3 node\(s\).*need 4 nodes"):
        registry.run("throughput", problem, CPU_BOUND | {"hosts": 3})


def test_the_cap_is_part_of_what_a_plan_is_remembered_for() -> None:
    """Plans on declared costs are remembered (``fastest._memo_key``), each for its cap."""
    topology = model_topology("linear-cpu")
    assert topology is not None
    problem = Problem(_nodes(), dataclasses.replace(topology, id="remembered", workers=6))
    spread = registry.run("throughput", problem, CPU_BOUND | {"hosts": "all"})
    capped = registry.run("throughput", problem, CPU_BOUND | {"hosts": "packed"})
    assert _nodes_used(dict(capped.node_of)) == 3 < _nodes_used(dict(spread.node_of))
    for params, plan in (
        (CPU_BOUND | {"hosts": "packed"}, capped),
        (CPU_BOUND, capped),  # packed is the default
        (CPU_BOUND | {"hosts": "all"}, spread),
    ):
        recalled = registry.recall("throughput", problem, params)
        assert recalled is not None and dict(recalled.node_of) == dict(plan.node_of)
    assert registry.recall("throughput", problem, CPU_BOUND | {"hosts": "4"}) is None


def test_under_a_cap_the_declared_cpu_is_the_capacity() -> None:
    """Measured at 12 points per executor (what a CPU-bound topology burns on saturated
    hosts), Linear-CPU's 108 points fit no three 30-point hosts: uncapped on three hosts the
    registry refuses the problem; capped, it plans on the 10 points declared, as Storm's RAS
    accounts them, and keeps the measured CPU per tuple for the model."""
    problem = _cpu_bound("linear-cpu")
    measured = {e.id: 12.0 for e in problem.topology.executors}
    topology = dataclasses.replace(problem.topology, executor_cpu=measured)
    three = Problem(problem.nodes[:3], topology)
    with pytest.raises(InfeasibleError):
        registry.run("throughput", three, CPU_BOUND | {"hosts": "all"})
    plan = registry.run("throughput", three, CPU_BOUND)  # packed, the default
    assert _nodes_used(dict(plan.node_of)) == 3
    declared = declared_capacity(three)
    assert all(e.cpu == 10.0 for e in declared.topology.executors)
    assert declared.topology.work_seconds == three.topology.work_seconds
    assert declared_capacity(problem) is problem  # nothing measured: the same problem
