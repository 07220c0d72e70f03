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
    and adds a fourth worker. Best: keep W(6700) and W(6702) intact; the two workers that
    restart anyway go to free ports (6703, 6704), not to 6701, whose worker the supervisor
    must kill first → 2 restarts, both started at once."""
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
        "b#0": ("n0", 6703),
        "b#1": ("n0", 6704),
        "d#0": ("n0", 6704),
    }
    assert restarted_workers(current, placed) == 2


def test_a_restarting_worker_without_a_free_port_reuses_the_most_overlapping_slot() -> None:
    current = {"a#0": WorkerSlot("n0", 6700), "b#0": WorkerSlot("n0", 6701)}
    plan = Placement("t", {"a#0": "n0", "b#0": "n0", "c#0": "n0"}, worker_of={"c#0": 1})
    placed = assign_slots(plan, {"n0": []}, current)  # no free port on n0
    # worker 0 {a, b} and worker 1 {c} both restart: {a, b} keeps more executors in 6700
    assert ports_of(placed) == {"a#0": ("n0", 6700), "b#0": ("n0", 6700), "c#0": ("n0", 6701)}


def test_executor_moving_to_another_node() -> None:
    current = {"a#0": WorkerSlot("n0", 6700), "b#0": WorkerSlot("n1", 6700)}
    plan = Placement("t", {"a#0": "n1", "b#0": "n1"})
    placed = assign_slots(plan, {"n0": [6701], "n1": [6701]}, current)
    # n1's worker restarts (it gains a#0): into the free 6701, beside the old one in 6700
    assert ports_of(placed) == {"a#0": ("n1", 6701), "b#0": ("n1", 6701)}
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


def test_hungarian_follows_the_rules_in_order() -> None:
    """Against brute force over every port permutation, on seeded random cases: the chosen
    mapping maximises (workers kept running, restarted workers on free ports, executors left
    in their slot) in that order."""
    for seed in range(60):
        rng = random.Random(seed)
        executors = [f"e#{i}" for i in range(rng.randint(2, 9))]
        ports = sorted(rng.sample(range(6700, 6710), rng.randint(3, 6)))
        in_use = rng.sample(ports, rng.randint(1, len(ports)))
        current = {e: WorkerSlot("n0", rng.choice(in_use)) for e in executors}
        workers = rng.randint(1, min(3, len(ports)))
        if seed % 3 == 0:  # some plans keep a running worker exactly as it is
            worker_of = {e: in_use.index(current[e].port) % workers for e in executors}
        else:
            worker_of = {e: rng.randrange(workers) for e in executors}
        plan = Placement("t", dict.fromkeys(executors, "n0"), worker_of=worker_of)
        placed = assign_slots(plan, {"n0": ports}, current)

        logical = sorted(set(plan.worker_of.values()))
        members = {k: {e for e in executors if plan.worker_of[e] == k} for k in logical}
        running = {p: {e for e in executors if current[e].port == p} for p in ports}

        best = max(
            _rule_key(dict(zip(logical, choice, strict=True)), members, running, current, plan)
            for choice in itertools.permutations(ports, len(logical))
        )
        got = {plan.worker_of[e]: placed.slot_of[e].port for e in executors}
        assert _rule_key(got, members, running, current, plan) == best, seed


def _rule_key(
    choice: dict[int, int],
    members: dict[int, set[str]],
    running: dict[int, set[str]],
    current: dict[str, WorkerSlot],
    plan: Placement,
) -> tuple[int, int, int]:
    """(workers kept running, restarted workers on free ports, executors left in place)"""
    kept = sum(1 for k, port in choice.items() if members[k] == running[port])
    on_free = sum(
        1 for k, port in choice.items() if members[k] != running[port] and not running[port]
    )
    stays = sum(1 for e, slot in current.items() if slot.port == choice[plan.worker_of[e]])
    return kept, on_free, stays
