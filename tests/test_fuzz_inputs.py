"""Fuzzing the brain's two inputs (hypothesis): the interchange JSON of ``scheduler-py plan``
and the shim's cluster snapshot. Every input yields a valid placement or a clear
SchedulingError naming what is wrong — never another exception (a traceback)."""

from __future__ import annotations

import copy
import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.model.cost import violations
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.io_json import load_document
from scheduler_py.model.types import Problem
from scheduler_py.scheduling.documents import plan_document
from scheduler_py.scheduling.round import LEAVE, RoundConfig, plan_round
from scheduler_py.service.snapshot import to_state
from tests import fuzz_report
from tests.snapshots import snapshot, supervisor, wordcount

BASE_DOCUMENT = {
    "nodes": [
        {"id": "n1", "cpu": 200.0, "slots": 4, "memory_mb": 4096, "rack": "r1"},
        {"id": "n2", "cpu": 200.0, "slots": 4, "rack": "r2"},
    ],
    "topologies": [
        {
            "id": "t1",
            "workers": 3,
            "components": [
                {"id": "spout", "parallelism": 2, "cpu": 40.0},
                {"id": "split", "parallelism": 3, "cpu": 90.0, "memory_mb": 256},
                {"id": "count", "parallelism": 2, "cpu": 30.0},
            ],
            "edges": [
                {"from": "spout", "to": "split", "traffic": 10.0},
                {"from": "split", "to": "count", "traffic": 30.0},
            ],
        }
    ],
}

ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([-1.0, 0.0, 1e12, math.nan, math.inf, -math.inf]),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(value, prefix=()):
    """Every (container path, key) of a JSON value."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key)
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*prefix, index)
            yield from _paths(child, (*prefix, index))


ALL_PATHS = list(_paths(BASE_DOCUMENT))


@st.composite
def mutated_documents(draw):
    document = copy.deepcopy(BASE_DOCUMENT)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(ALL_PATHS))
        parent = document
        try:
            for step in path[:-1]:
                parent = parent[step]
            action = draw(st.sampled_from(["replace", "delete", "duplicate"]))
            if action == "delete":
                del parent[path[-1]]
            elif action == "duplicate" and isinstance(parent, list):
                parent.append(copy.deepcopy(parent[path[-1]]))
            else:
                parent[path[-1]] = draw(ODD_VALUES)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced this path
    return document


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents(), st.sampled_from(["td", "rstorm", "even", "t3"]))
def test_every_document_is_planned_or_refused_with_a_reason(document, algorithm):
    fuzz_report.ran("interchange JSON (scheduler-py plan)")
    text = json.dumps(document, allow_nan=True)
    try:
        planned = plan_document(load_document(text), algorithm)
    except SchedulingError as error:
        assert str(error), "a refusal must say why"
        return
    nodes = {n["id"]: n for n in document["nodes"]}
    assert nodes
    for topology, placement, _ in planned:
        assert set(placement.node_of) == set(topology.executor_by_id)
        assert set(placement.node_of.values()) <= set(nodes)
        assert not violations(Problem(tuple(_nodes(document)), topology), placement) or (
            algorithm == "even"
        )


def _nodes(document):
    from scheduler_py.model.io_json import nodes_from_json

    return nodes_from_json(document["nodes"])


SNAPSHOT_FIELDS = {
    "supervisor": [
        "id",
        "host",
        "rack",
        "slots",
        "total_cpu",
        "available_cpu",
        "available_memory_mb",
    ],
    "component": ["id", "parallelism", "cpu_per_executor", "memory_mb_per_executor", "inputs"],
    "executor": ["task_start", "task_end", "component"],
    "topology": ["id", "name", "num_workers", "components", "executors", "current", "conf"],
}


@st.composite
def mutated_snapshots(draw):
    current = [(1, 1, "sup-a", 6700), (2, 2, "sup-b", 6710)] if draw(st.booleans()) else []
    snap = snapshot(
        [supervisor("sup-a", (6700, 6701)), supervisor("sup-b", (6710, 6711))],
        [wordcount(current=current, conf=draw(st.sampled_from([None, {"x": 1}])))],
    )
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(sorted(SNAPSHOT_FIELDS)))
        name = draw(st.sampled_from(SNAPSHOT_FIELDS[kind]))
        topo = snap.topologies[0]
        containers = {
            "supervisor": snap.supervisors,
            "component": topo.components,
            "executor": topo.executors,
            "topology": [topo],
        }
        items = containers[kind]
        if not isinstance(items, list) or not items:
            continue  # an earlier mutation replaced the list itself
        target = items[draw(st.integers(0, len(items) - 1))]
        if not hasattr(target, "thrift_spec"):
            continue  # an earlier mutation replaced this element with a plain value
        setattr(target, name, draw(ODD_VALUES))
    return snap


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_snapshots())
def test_every_snapshot_is_answered_or_refused_with_a_reason(snap):
    fuzz_report.ran("cluster snapshot (the shim's input)")
    try:
        state = to_state(snap)
    except SchedulingError as error:
        assert "malformed cluster snapshot" in str(error)
        return
    decisions = plan_round(state, RoundConfig(round_budget_secs=5.0))
    expected = [t.id for t in state.topologies] + list(state.rejected)
    assert [d.topology_id for d in decisions] == expected
    for decision in decisions:
        assert decision.reason, "every decision carries a reason for the Storm status"
        if decision.decision == LEAVE:
            continue
        ports = {(s.id, slot.port) for s in state.supervisors for slot in s.slots}
        assert {(run.supervisor_id, run.port) for run in decision.runs} <= ports


def test_huge_counts_are_refused_before_anything_is_allocated():
    """1e12 is an integral number, so JSON Schema's ``integer`` accepts it: without a
    maximum, a fuzzed ``parallelism`` of 1e12 made the planner allocate until the kernel
    killed the process."""
    import pytest

    for path, value in (
        (("topologies", 0, "components", 0, "parallelism"), 1e12),
        (("topologies", 0, "workers"), 1e12),
        (("nodes", 0, "slots"), 1e12),
    ):
        document = copy.deepcopy(BASE_DOCUMENT)
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        with pytest.raises(SchedulingError, match="invalid problem JSON"):
            plan_document(load_document(json.dumps(document)), "td")


def test_two_supervisors_with_one_id_are_refused_as_a_malformed_snapshot():
    """Found by the property above: two supervisors whose ids a fuzzed snapshot made equal
    reached the model, whose ``Problem`` raised a bare ValueError out of the round."""
    import pytest

    snap = snapshot([supervisor("sup-a"), supervisor("sup-a")], [wordcount()])
    with pytest.raises(SchedulingError, match="supervisor id 'sup-a' appears more than once"):
        to_state(snap)
