"""Logical → physical slot mapping (``model.slots``): fewest worker restarts, lowest ports."""

from __future__ import annotations

import itertools
import random

import pytest

from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.slots import assign_slots, restarted_workers
from scheduler_py.model.types import Placement, WorkerSlot


def ports_of(placement: Placement) -> dict[str, tuple[str, int]]:
    return {e: (s.node, s.port) for e, s in placement.slot_of.items()}


def test_fresh_topology_gets_the_lowest_ports_in_worker_order() -> None:
    plan = Placement(
        "t",
        {"a#0": "n0", "a#1": "n0", "b#0": "n0", "c#0": "n1"},
        worker_of={"b#0": 2, "a#1": 0},
    )
    placed = assign_slots(plan, {"n0": [6703, 6700, 6701], "n1": [6705, 6704]})
    assert ports_of(placed) == {
        "a#0": ("n0", 6700),
        "a#1": ("n0", 6700),
        "b#0": ("n0", 6701),  # logical worker 2 is the second worker of n0
        "c#0": ("n1", 6704),
    }
    assert placed.node_of == plan.node_of  # nothing else changes
    assert restarted_workers({}, placed) == 3


def test_unchanged_plan_keeps_every_executor_in_place() -> None:
    """The same grouping on the same nodes, but logical indices differ from the ports'
    order: the mapping must follow the current slots, so nothing restarts."""
    current = {
        "a#0": WorkerSlot("n0", 6702),
        "a#1": WorkerSlot("n0", 6702),
        "b#0": WorkerSlot("n0", 6700),
        "c#0": WorkerSlot("n1", 6701),
    }
    plan = Placement(
        "t",
        {"a#0": "n0", "a#1": "n0", "b#0": "n0", "c#0": "n1"},
        worker_of={"b#0": 1},
    )
    # the topology's own ports are not in free_ports: they count as available anyway
    placed = assign_slots(plan, {"n0": [6703], "n1": []}, current)
    assert placed.slot_of == current
    assert restarted_workers(current, placed) == 0
    assert restarted_workers(current, placed.slot_of) == 0


def test_minimal_restarts_after_a_move() -> None:
    """Hand-built: three workers on n0 now; the plan moves one executor between workers
    and adds a fourth worker. Best: keep W(6700) and W(6702) intact, change 6701, new one
    on the lowest free port 6703 → 2 restarts."""
    current = {
        "a#0": WorkerSlot("n0", 6700),
        "a#1": WorkerSlot("n0", 6700),
        "b#0": WorkerSlot("n0", 6701),
        "b#1": WorkerSlot("n0", 6701),
        "c#0": WorkerSlot("n0", 6702),
    }
    plan = Placement(
        "t",
        {"a#0": "n0", "a#1": "n0", "b#0": "n0", "b#1": "n0", "c#0": "n0", "d#0": "n0"},
        worker_of={"c#0": 0, "a#0": 1, "a#1": 1, "b#0": 2, "b#1": 3, "d#0": 3},
    )
    placed = assign_slots(plan, {"n0": [6703, 6705, 6704]}, current)
    assert ports_of(placed) == {
        "c#0": ("n0", 6702),
        "a#0": ("n0", 6700),
        "a#1": ("n0", 6700),
        "b#0": ("n0", 6701),
        "b#1": ("n0", 6703),
        "d#0": ("n0", 6703),
    }
    assert restarted_workers(current, placed) == 2


def test_executor_moving_to_another_node() -> None:
    current = {"a#0": WorkerSlot("n0", 6700), "b#0": WorkerSlot("n1", 6700)}
    plan = Placement("t", {"a#0": "n1", "b#0": "n1"})
    placed = assign_slots(plan, {"n0": [6701], "n1": [6701]}, current)
    # b#0 stays in n1:6700 (the current port wins over the lower-numbered tie rule)
    assert ports_of(placed) == {"a#0": ("n1", 6700), "b#0": ("n1", 6700)}
    assert restarted_workers(current, placed) == 1


def test_too_few_ports_is_a_clear_error() -> None:
    plan = Placement("t", {"a#0": "n0", "b#0": "n0"}, worker_of={"b#0": 1})
    with pytest.raises(SchedulingError, match="2 worker\\(s\\) on node n0 but only 1 port"):
        assign_slots(plan, {"n0": [6700]})
    with pytest.raises(SchedulingError, match="none"):
        assign_slots(Placement("t", {"a#0": "n9"}), {"n0": [6700]})


def test_restarted_workers_counts_changed_and_new_slots_only() -> None:
    old = {"a": WorkerSlot("n0", 1), "b": WorkerSlot("n0", 1), "c": WorkerSlot("n1", 1)}
    new = {"a": WorkerSlot("n0", 1), "b": WorkerSlot("n0", 2), "c": WorkerSlot("n1", 1)}
    assert restarted_workers(old, new) == 2  # n0:1 lost b, n0:2 is new; n1:1 unchanged
    assert restarted_workers(old, {}) == 0  # stopping workers is not a restart
    assert restarted_workers(old, old) == 0


def test_hungarian_keeps_the_most_executors_in_place() -> None:
    """Against brute force over every port permutation, on seeded random cases."""
    for seed in range(40):
        rng = random.Random(seed)
        executors = [f"e#{i}" for i in range(rng.randint(2, 9))]
        ports = sorted(rng.sample(range(6700, 6710), rng.randint(3, 6)))
        current = {e: WorkerSlot("n0", rng.choice(ports)) for e in executors}
        workers = rng.randint(1, min(3, len(ports)))
        plan = Placement(
            "t",
            dict.fromkeys(executors, "n0"),
            worker_of={e: rng.randrange(workers) for e in executors},
        )
        placed = assign_slots(plan, {"n0": ports}, current)

        logical = sorted(set(plan.worker_of.values()))
        best = max(
            sum(1 for e in executors if current[e].port == choice[logical.index(plan.worker_of[e])])
            for choice in itertools.permutations(ports, len(logical))
        )
        stays = sum(1 for e in executors if placed.slot_of[e] == current[e])
        assert stays == best, seed
        # one slot per logical worker, distinct ports
        used = {placed.slot_of[e] for e in executors}
        assert len(used) == len(logical)
