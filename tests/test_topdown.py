"""topDown (``td``): parameters, relaxations, fallback chain and properties.

The hypothesis strategies here (:func:`feasible_problems`, :func:`oversized_problems`) are
shared with the TL and naive tests.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.topdown import groups as _groups
from scheduler_py.algorithms.topdown import td as topdown
from scheduler_py.model.cost import imc_gain, violations
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology

FAST = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


# -- strategies ---------------------------------------------------------------------------
@st.composite
def feasible_problems(draw, measured: bool = False) -> Problem:
    """Small problems that any greedy packing can place.

    Every executor needs at most half of the smallest usable node and the total at most half
    of the usable capacity (both for CPU and memory), so a task that does not fit the freest
    node is impossible. Sometimes a node has no free slot (it must stay unused), sometimes
    memory is bounded, and with ``measured`` the topology may carry measured per-executor
    CPU and executor-pair traffic (skewed), which exercises subgrouping.
    """
    k = draw(st.integers(1, 5))
    caps = [draw(st.sampled_from([40.0, 60.0, 100.0, 150.0, 200.0])) for _ in range(k)]
    bounded = draw(st.booleans())
    mems = [draw(st.sampled_from([1000.0, 2000.0, 4000.0])) if bounded else float("inf")] * k
    nodes = [Node(f"n{i}", caps[i], slots=2, memory_mb=mems[i]) for i in range(k)]
    if draw(st.booleans()):
        nodes.append(Node("dead", 500.0, slots=0))
    g = draw(st.integers(1, 5))
    sizes = [draw(st.integers(1, 6)) for _ in range(g)]
    fractions = [draw(st.floats(0.0, 1.0)) for _ in range(g)]
    per_cap = min(caps) / 2
    per_mem = (min(mems) / 2) if bounded else 300.0
    cpu = [f * per_cap for f in fractions]
    total = sum(c * s for c, s in zip(cpu, sizes, strict=True))
    if total > sum(caps) / 2:
        cpu = [c * (sum(caps) / 2) / total for c in cpu]
    mem = [draw(st.floats(0.0, 1.0)) * per_mem for _ in range(g)]
    mtotal = sum(m * s for m, s in zip(mem, sizes, strict=True))
    if bounded and mtotal > sum(mems) / 2:
        mem = [m * (sum(mems) / 2) / mtotal for m in mem]
    comps = tuple(
        Component(f"c{i}", sizes[i], cpu[i] * sizes[i], memory_mb=mem[i] * sizes[i])
        for i in range(g)
    )
    edges = tuple(
        Edge(f"c{i}", f"c{j}", draw(st.floats(0.0, 50.0)))
        for i in range(g)
        for j in range(i + 1, g)
        if draw(st.booleans())
    )
    executor_cpu: dict[str, float] = {}
    pair_traffic: dict[tuple[str, str], float] = {}
    if measured and draw(st.booleans()):
        for i, c in enumerate(comps):  # skew: shrink some executors (never grow them)
            for j in range(c.parallelism):
                executor_cpu[f"c{i}#{j}"] = cpu[i] * draw(st.sampled_from([1.0, 0.5, 0.1]))
        for e in edges:
            src, dst = comps[int(e.source[1:])], comps[int(e.target[1:])]
            for a in range(src.parallelism):
                for b in range(dst.parallelism):
                    if draw(st.booleans()):
                        rate = e.traffic * draw(st.sampled_from([1.0, 0.2, 5.0]))
                        pair_traffic[(f"{src.id}#{a}", f"{dst.id}#{b}")] = rate
    topology = Topology("hyp", comps, edges, executor_cpu=executor_cpu, pair_traffic=pair_traffic)
    return Problem(tuple(nodes), topology)


@st.composite
def oversized_problems(draw) -> tuple[Problem, str, str]:
    """A problem where one component's executor is bigger than every node (CPU or memory)."""
    resource = draw(st.sampled_from(["cpu", "memory"]))
    k = draw(st.integers(1, 4))
    nodes = tuple(Node(f"n{i}", 100.0, memory_mb=1000.0) for i in range(k))
    size = draw(st.integers(1, 3))
    big = Component(
        "big",
        size,
        (150.0 if resource == "cpu" else 10.0) * size,
        memory_mb=(2000.0 if resource == "memory" else 10.0) * size,
    )
    small = Component("small", 2, 10.0, memory_mb=10.0)
    topology = Topology("over", (small, big), (Edge("small", "big", 5.0),))
    return Problem(nodes, topology), resource, "big"


TD_VARIANTS = [
    {},
    {"second_mode": "literal"},
    {"k0_guard": "minimal"},
    {"k0_guard": "maxprod"},
    {"key": "imc_group"},
    {"key": "imc_task", "subgroup_margin": 0.0},
]


def check_complete(problem: Problem, placement: Placement) -> None:
    assert set(placement.node_of) == set(problem.topology.executor_by_id)
    assert not violations(problem, placement)
    usable = {n.id for n in problem.nodes if n.slots > 0}
    assert set(placement.node_of.values()) <= usable
    assert not placement.worker_of


# -- parameters ---------------------------------------------------------------------------
def test_registered_parameters_and_defaults():
    info = registry.get("td")
    defaults = {name: default for name, (default, _) in info.params.items()}
    assert defaults == {
        "key": "rs",
        "k0_guard": "degrade",
        "second_mode": "next",
        "subgroup_margin": 0.2,
        "normalise_speed": False,
        "fallback": True,
    }


@pytest.mark.parametrize(
    "params", [{"key": "nope"}, {"k0_guard": "g9"}, {"second_mode": "first"}, {"bogus": 1}]
)
def test_bad_parameters_are_rejected(params):
    problem = Problem((Node("n0", 100),), Topology("t", (Component("a", 1, 10),)))
    with pytest.raises(SchedulingError):
        registry.run("td", problem, params)


# -- behaviour ----------------------------------------------------------------------------
def pipeline(groups=4, tasks=100, nodes=8, imc_seed=1) -> Problem:
    rng = random.Random(imc_seed)
    comps = tuple(Component(f"g{i}", tasks, 100.0) for i in range(groups))
    edges = tuple(
        Edge(f"g{i}", f"g{i + 1}", 10 * rng.uniform(0.95, 1.05)) for i in range(groups - 1)
    )
    return Problem(
        tuple(Node(f"n{i}", 100.0) for i in range(nodes)), Topology("pipe", comps, edges)
    )


def test_throughput_pipeline_shape_is_placed_in_balanced_slices():
    problem = pipeline()
    placement = registry.run("td", problem)
    check_complete(problem, placement)
    report = placement.report
    assert report["fallback"] is None and report["groups"] == 4
    # the best pair is split 50/50 over two nodes: 2 · 50 · 50 collocated links
    assert imc_gain(problem.topology, placement.node_of) > 0.45 * 10


def test_isolated_groups_and_single_group_jobs_are_placed():
    comps = (Component("a", 3, 30), Component("b", 2, 20), Component("lonely", 4, 40))
    topology = Topology("iso", comps, (Edge("a", "b", 5),))
    problem = Problem((Node("n0", 60), Node("n1", 60)), topology)
    check_complete(problem, registry.run("td", problem))
    solo = Problem((Node("n0", 60), Node("n1", 60)), Topology("solo", (Component("x", 5, 100),)))
    check_complete(solo, registry.run("td", solo))


def test_node_without_slot_is_never_used():
    topology = Topology("s", (Component("a", 2, 20), Component("b", 2, 20)), (Edge("a", "b", 9),))
    problem = Problem((Node("huge", 1000, slots=0), Node("n1", 100)), topology)
    for name in ("td", "tl", "naive"):
        placement = registry.run(name, problem)
        assert set(placement.node_of.values()) == {"n1"}


def test_no_slot_anywhere_names_slots():
    topology = Topology("s", (Component("a", 1, 20),))
    problem = Problem((Node("n0", 100, slots=0),), topology)
    for name in ("td", "tl", "naive"):
        with pytest.raises(InfeasibleError) as error:
            registry.run(name, problem)
        assert error.value.resource == "slots"


def test_memory_is_a_second_hard_capacity():
    comps = (Component("a", 1, 10, memory_mb=600), Component("b", 1, 10, memory_mb=600))
    topology = Topology("m", comps, (Edge("a", "b", 50),))
    problem = Problem((Node("n0", 100, memory_mb=1000), Node("n1", 100, memory_mb=1000)), topology)
    for name in ("td", "tl", "naive"):
        placement = registry.run(name, problem)
        assert placement.node_of["a#0"] != placement.node_of["b#0"]
    # the freest-CPU node lacks memory: the single goes to the next node with room for both
    lonely = Topology("m2", (Component("x", 1, 10, memory_mb=500),))
    tight = Problem((Node("n0", 200, memory_mb=100), Node("n1", 100, memory_mb=1000)), lonely)
    for name in ("td", "tl", "naive"):
        assert registry.run(name, tight).node_of == {"x#0": "n1"}


def test_fallback_chain_reaches_first_fit_decreasing():
    # TD fuses c0+c2 (85 of 120) and cannot fit both 65 % c1 executors; TL neither; FFD does
    comps = (Component("c0", 1, 40.0), Component("c1", 2, 130.0), Component("c2", 3, 45.0))
    topology = Topology("ffd", comps, (Edge("c0", "c2", 15.0),))
    problem = Problem((Node("n0", 120.0), Node("n1", 120.0)), topology)
    placement = registry.run("td", problem)
    check_complete(problem, placement)
    fallback = placement.report["fallback"]
    assert fallback["used"] == "ffd"
    assert len(fallback["failed"]) == 2
    assert fallback["failed"][0].startswith("td ") and fallback["failed"][1].startswith("tl ")


def test_every_stage_failing_raises_with_the_chain_and_a_suggestion():
    # FFD packs 50+40 | 30+30+25 and strands the last 25; {50,25,25} | {40,30,30} would fit
    comps = (
        Component("a", 1, 50.0),
        Component("b", 1, 40.0),
        Component("c", 2, 60.0),
        Component("d", 2, 50.0),
    )
    problem = Problem((Node("n0", 100.0), Node("n1", 100.0)), Topology("bp", comps))
    with pytest.raises(InfeasibleError) as error:
        registry.run("td", problem)
    message = str(error.value)
    assert "td → tl → ffd" in message and "component d" in message
    assert "rebalance" in message
    assert error.value.resource == "cpu" and error.value.component == "d"
    assert error.value.needed == pytest.approx(25.0)


def test_subgrouping_separates_a_hot_key():
    # fields grouping: b#0 receives most of the traffic and costs more
    cpu = {f"a#{i}": 20.0 for i in range(4)} | {"b#0": 60.0, "b#1": 10.0, "b#2": 10.0}
    cpu["b#3"] = 10.0
    traffic = {}
    for i in range(4):
        traffic[(f"a#{i}", "b#0")] = 20.0
        for j in (1, 2, 3):
            traffic[(f"a#{i}", f"b#{j}")] = 1.0
    topology = Topology(
        "skew",
        (Component("a", 4, 80), Component("b", 4, 90)),
        (Edge("a", "b", 92, "fields"),),
        executor_cpu=cpu,
        pair_traffic=traffic,
    )
    problem = Problem(tuple(Node(f"n{i}", 100) for i in range(3)), topology)
    groups = topdown.build_groups(problem, 0.2)
    assert groups.subgrouped and groups.size == [4, 1, 3]
    assert groups.edges == [(0, 1, 80.0), (0, 2, 12.0)]
    with_sub = registry.run("td", problem)
    without = registry.run("td", problem, {"subgroup_margin": 0.0})
    assert with_sub.report["subgrouped"] and not without.report["subgrouped"]
    assert imc_gain(topology, with_sub.node_of) == pytest.approx(46.0)  # the optimum
    assert imc_gain(topology, without.node_of) < 46.0


def test_skewed_costs_without_bucketing_are_costed_exactly():
    cpu = {"a#0": 45.0, "a#1": 5.0, "a#2": 5.0, "b#0": 45.0, "b#1": 5.0}
    topology = Topology(
        "exact",
        (Component("a", 3, 55), Component("b", 2, 50)),
        (Edge("a", "b", 10),),
        executor_cpu=cpu,
    )
    problem = Problem((Node("n0", 60), Node("n1", 60)), topology)
    groups = topdown.build_groups(problem, 0.0)
    assert groups.cpu_t == [None, None] and groups.cpu_pre[0] == [0.0, 45.0, 50.0, 55.0]
    check_complete(problem, registry.run("td", problem, {"subgroup_margin": 0.0}))


def test_speed_normalisation_scales_measured_cpu_of_fast_nodes():
    topology = Topology(
        "speed",
        (Component("a", 2, 100), Component("b", 1, 0)),
        (Edge("a", "b", 10),),
        executor_cpu={"a#0": 50.0, "a#1": 50.0, "b#0": 0.0},
    )
    current = Placement("speed", {"a#0": "fast", "a#1": "fast", "b#0": "slow"})
    nodes = (Node("fast", 100, speed=2.0), Node("slow", 100, speed=0.5), Node("n2", 100))
    problem = Problem(nodes, topology, current=current)
    assert _groups.planning_cpu(problem) == {"a#0": 100.0, "a#1": 100.0}
    plain = registry.run("td", problem)
    assert len(set(plain.node_of.values())) == 1  # 2 × 50 + 0 fuse on one node
    scaled = registry.run("td", problem, {"normalise_speed": True})
    assert scaled.node_of["a#0"] != scaled.node_of["a#1"]  # 2 × 100 reference-core %
    check_complete(problem, scaled)


def test_determinism_and_fresh_objects_give_identical_placements():
    first = registry.run("td", pipeline()).node_of
    assert registry.run("td", pipeline()).node_of == first
    assert registry.run("td", pipeline()).node_of == first


# -- properties ---------------------------------------------------------------------------
@FAST
@given(feasible_problems(measured=True), st.sampled_from(TD_VARIANTS))
def test_random_feasible_problems_are_placed_completely_within_capacity(problem, params):
    placement = registry.run("td", problem, params)  # the registry verifies the result
    check_complete(problem, placement)
    assert placement.report["fallback"] is None  # greedy always fits these problems


@FAST
@given(oversized_problems())
def test_oversized_executor_raises_naming_the_resource(case):
    problem, resource, component = case
    for params in ({}, {"fallback": False}):
        with pytest.raises(InfeasibleError) as error:
            registry.run("td", problem, params)
        assert error.value.resource == resource
        assert error.value.component == component
        assert resource in str(error.value).lower() or "memory" in str(error.value)


@FAST
@given(feasible_problems(), st.randoms(use_true_random=False))
def test_relabelling_identical_nodes_keeps_phi(problem, rnd):
    nodes = [Node(f"n{i}", 100.0, slots=2) for i in range(len(problem.nodes))]
    base = Problem(tuple(nodes), problem.topology)
    names = [f"x{rnd.randint(0, 10**6)}-{i}" for i in range(len(nodes))]
    rnd.shuffle(names)
    relabelled = Problem(
        tuple(Node(name, 100.0, slots=2) for name in reversed(names)), problem.topology
    )
    for name in ("td", "tl", "naive"):
        try:
            a = registry.run(name, base)
        except InfeasibleError:
            with pytest.raises(InfeasibleError):
                registry.run(name, relabelled)
            continue
        b = registry.run(name, relabelled)
        assert imc_gain(base.topology, a.node_of) == pytest.approx(
            imc_gain(base.topology, b.node_of)
        )


@FAST
@given(feasible_problems(measured=True), st.randoms(use_true_random=False))
def test_merge_nodes_never_lowers_phi(problem, rnd):
    nodes = [n for n in problem.nodes if n.slots > 0]
    pool = _groups.NodePool(nodes)
    node_of: dict[str, str] = {}
    for executor in problem.topology.executors:  # a random valid placement
        options = [n.id for n in nodes if pool.fits(n.id, executor.cpu, executor.memory_mb)]
        target = rnd.choice(options)
        pool.take(target, executor.cpu, executor.memory_mb)
        pool.members[target].append(executor.id)
        node_of[executor.id] = target
    before = imc_gain(problem.topology, node_of)
    a, b = rnd.choice(nodes).id, rnd.choice(nodes).id
    loads = (pool.used_cpu[a], pool.used_cpu[b])
    moved = pool.merge(a, b)
    if moved is None:
        assert (pool.used_cpu[a], pool.used_cpu[b]) == loads
        return
    target, items = moved
    source = b if target == a else a
    assert set(items) == {e for e, n in node_of.items() if n == source}
    for executor in items:
        node_of[executor] = target
    placement = Placement(problem.topology.id, node_of)
    assert not violations(problem, placement)
    assert imc_gain(problem.topology, node_of) >= before - 1e-9
    assert pool.cpu[source] == pool.init_cpu[source] and not pool.members[source]
    assert pool.top() in pool.cpu
