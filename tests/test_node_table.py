"""A :class:`NodeTable`'s lookups are the same whether it computed them or derived them from
another table with :meth:`NodeTable.replaced` (scheduler_py/model/types.py), and the algorithms
read the same nodes either way (scheduling/round.py: a round derives every topology's nodes from the
last one's)."""

from __future__ import annotations

import heapq
import pickle
import random

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.topdown.groups import NodePool
from scheduler_py.model.capacity import CapacityTracker, check_feasible, usable_nodes
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import Component, Edge, Node, NodeTable, Problem, Topology


def _nodes(rng: random.Random, count: int) -> list[Node]:
    return [
        Node(
            f"n{i:03d}",
            rng.choice([0.0, 50.0, 200.0, 400.0]),
            rng.choice([0, 1, 4]),
            rng.choice([0.0, 1024.0, 4096.0]),
            rng.choice(["r1", "r2"]),
        )
        for i in range(count)
    ]


def _changed(rng: random.Random, table: NodeTable) -> list[Node]:
    """A few of ``table``'s nodes with new capacities, free slots going to 0 and back."""
    return [
        Node(node.id, rng.choice([0.0, 10.0, 200.0, 390.0]), rng.choice([0, 2]), 512.0, node.rack)
        for node in rng.sample(list(table), rng.randint(0, 4))
    ]


def assert_same_lookups(derived: NodeTable, computed: NodeTable) -> None:
    assert derived == computed
    for lookup in ("position", "by_id", "cpu", "memory", "zeros"):
        assert list(getattr(derived, lookup).items()) == list(getattr(computed, lookup).items())
    heap = list(derived.heap)
    assert sorted(heap) == sorted(computed.heap)  # the same entries, and a heap:
    assert all(heap[(i - 1) // 2] <= heap[i] for i in range(1, len(heap)))


@pytest.mark.parametrize("seed", range(8))
def test_a_derived_table_looks_up_what_a_computed_one_does(seed):
    rng = random.Random(seed)
    table = NodeTable(_nodes(rng, 40))
    for _ in range(30):
        changed = _changed(rng, table)
        table = table.replaced(changed)
        by_id = {n.id: n for n in changed}
        computed = NodeTable(by_id.get(n.id, n) for n in table)
        assert_same_lookups(table, computed)
        assert_same_lookups(table.usable, computed.usable)
        assert tuple(table.usable) == tuple(n for n in computed if n.slots > 0)


@pytest.mark.parametrize("seed", range(8))
def test_lookups_read_on_some_tables_only_are_still_the_computed_ones(seed):
    """A lookup is derived when the table before had it, else computed; a table never keeps
    the table it came from (a round's tables would otherwise keep each other)."""
    rng = random.Random(seed)
    table = NodeTable(_nodes(rng, 40))
    lookups = ("by_id", "cpu", "memory", "heap", "usable")
    for _ in range(30):
        for lookup in rng.sample(lookups, rng.randint(0, len(lookups))):
            getattr(table, lookup)
        before = table
        changed = _changed(rng, table)
        table = table.replaced(changed)
        if changed:
            assert all(v is not before for v in vars(table).values())
            assert all(v is not before for v in vars(vars(table).get("_from", table)).values())
        by_id = {n.id: n for n in changed}
        computed = NodeTable(by_id.get(n.id, n) for n in table)
        if rng.random() < 0.5:
            assert_same_lookups(table, computed)
            assert tuple(table.usable) == tuple(n for n in computed if n.slots > 0)


def test_replacing_nothing_is_the_table_itself_and_an_unknown_node_is_an_error():
    table = NodeTable([Node("a", 100.0), Node("b", 50.0)])
    assert table.replaced([]) is table
    with pytest.raises(KeyError):
        table.replaced([Node("c", 10.0)])


def test_every_node_usable_makes_the_table_its_own_usable_table():
    table = NodeTable([Node("a", 100.0), Node("b", 50.0, slots=0)])
    assert tuple(table.usable) == (Node("a", 100.0),)
    fixed = table.replaced([Node("b", 50.0, slots=1)])
    assert fixed.usable is fixed and usable_nodes(Problem(fixed, _topology())) is fixed


def test_a_problem_keeps_its_table_and_makes_one_of_anything_else():
    table = NodeTable([Node("a", 100.0), Node("b", 50.0)]).replaced([Node("b", 60.0)])
    assert Problem(table, _topology()).nodes is table
    plain = Problem([Node("a", 100.0), Node("b", 60.0)], _topology())
    assert isinstance(plain.nodes, NodeTable) and plain == Problem(table, _topology())
    with pytest.raises(ValueError, match="duplicate node ids"):
        Problem(NodeTable([Node("a", 1.0), Node("a", 2.0)]), _topology())


def test_a_nan_capacity_leaves_the_heap_as_a_node_pool_always_arranged_it():
    table = NodeTable([Node("a", 100.0), Node("b", float("nan")), Node("c", 50.0)])
    derived = table.replaced([Node("c", 60.0)])
    arranged = [(-n.cpu, n.id) for n in derived]
    heapq.heapify(arranged)
    assert repr(list(derived.heap)) == repr(arranged)  # NaN is not equal to itself


def test_a_table_pickles_as_its_nodes():
    table = NodeTable([Node("a", 100.0), Node("b", 50.0)])
    table.replaced([Node("a", 90.0)]).by_id  # noqa: B018  lookups computed before pickling
    copy = pickle.loads(pickle.dumps(table.replaced([Node("a", 90.0)])))
    assert isinstance(copy, NodeTable) and copy == (Node("a", 90.0), Node("b", 50.0))
    assert copy.cpu == {"a": 90.0, "b": 50.0}


def _topology() -> Topology:
    return Topology(
        "t",
        (Component("a", 4, 80.0, 512.0, is_spout=True), Component("b", 6, 300.0, 768.0)),
        (Edge("a", "b", 2.0),),
    )


@pytest.mark.parametrize("seed", range(5))
def test_the_capacity_tracker_node_pool_and_plans_read_the_same_nodes(seed):
    """From a derived table or from a tuple of the same nodes: the same tracker, pool, and
    feasibility verdict, and every algorithm's plan is the same."""
    rng = random.Random(seed)
    table = NodeTable(_nodes(rng, 30))
    for _ in range(5):
        table = table.replaced(_changed(rng, table))
    plain = tuple(table)
    tracker, fresh = CapacityTracker(table.usable), CapacityTracker(plain)
    usable = {n.id for n in plain if n.slots > 0}
    assert tracker.cpu == {n: c for n, c in fresh.cpu.items() if n in usable}
    pool, reference = NodePool(table.usable), NodePool([n for n in plain if n.slots > 0])
    assert (pool.cpu, pool.mem, pool.used_cpu) == (reference.cpu, reference.mem, reference.used_cpu)
    assert heapq.nsmallest(len(pool.heap), pool.heap) == sorted(reference.heap)
    derived, computed = Problem(table, _topology()), Problem(plain, _topology())
    assert computed.nodes is not table
    try:
        check_feasible(computed)
    except InfeasibleError as error:  # both say so, the same way
        with pytest.raises(InfeasibleError) as same:
            check_feasible(derived)
        assert str(same.value) == str(error)
        return
    check_feasible(derived)
    for algorithm in ("td", "tl", "naive", "tdls", "links", "locality", "rstorm", "online"):
        assert dict(registry.run(algorithm, derived).node_of) == dict(
            registry.run(algorithm, computed).node_of
        ), algorithm


@pytest.mark.parametrize("seed", range(20))
def test_feasibility_is_judged_as_the_maxima_and_totals_say(seed):
    """check_feasible's shortcut (one node holds everything) says what the full check says."""
    rng = random.Random(seed)
    table = NodeTable(_nodes(rng, rng.randint(4, 12)))
    for _ in range(3):
        table = table.replaced(_changed(rng, table))
    cpu, memory = rng.choice([10.0, 100.0, 600.0, 5000.0]), rng.choice([100.0, 3000.0, 9000.0])
    topology = Topology(
        "t", (Component("a", 2, cpu, memory, is_spout=True), Component("b", 3, cpu, memory))
    )
    usable = [n for n in table if n.slots > 0]
    executors = topology.executors
    expected = bool(usable) and all(
        max(getattr(e, need) for e in executors) <= max(getattr(n, have) for n in usable) + 1e-9
        and sum(getattr(e, need) for e in executors) <= sum(getattr(n, have) for n in usable) + 1e-9
        for need, have in (("cpu", "cpu"), ("memory_mb", "memory_mb"))
    )
    try:
        check_feasible(Problem(table, topology))
    except InfeasibleError:
        assert not expected
    else:
        assert expected
