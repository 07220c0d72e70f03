"""The JSON interchange format for problems and placements (schema: ``problem.schema.json``).

Operators and outside tools write problems in this form, so it is fixed; fields beyond the
minimal component-level form are optional::

    {"nodes": [{"id": "n1", "cpu": 100.0, "slots": 4}],
     "topologies": [{"id": "t1",
       "components": [{"id": "spout", "parallelism": 5, "cpu": 50.0}],
       "edges": [{"from": "spout", "to": "split", "traffic": 12.5}]}]}

``cpu`` is in percent of one core (a node's capacity; a component's total, split evenly
over its executors as in paper 000 Eq. 1); ``traffic`` is a component edge's total rate,
split evenly over its executor pairs. Optional: node ``memory_mb``, ``rack``, ``speed``,
``bandwidth`` and ``rack_uplink`` (bytes/s); component ``memory_mb``; topology ``workers``,
``name``, measured ``executor_cpu`` ({"spout#0": 12.0}) and ``pair_traffic`` ([{"from":
"spout#0", "to": "split#1", "traffic": 1.0}]), and the ``current`` placement in the output's
assignment shape ({component: [node of executor 0, ...]}).

A placement is written as ``{"assignment": {topology: {component: [node, ...]}},
"workers": {...same shape, logical worker index...}, "summary": {...}, "topologies":
{topology: {"summary": ..., "report": ...}}}``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from scheduler_py.model.cost import Evaluation
from scheduler_py.model.errors import InvalidProblemError
from scheduler_py.model.types import (
    Component,
    Edge,
    Node,
    Placement,
    Topology,
    executor_id,
)


@cache
def problem_schema() -> dict[str, Any]:
    text = resources.files("scheduler_py.model").joinpath("problem.schema.json").read_text()
    return json.loads(text)


def validate_document(document: Any) -> None:
    """Raise :class:`InvalidProblemError` naming the first schema violation and its path."""
    validator = jsonschema.Draft202012Validator(problem_schema())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(document root)"
        raise InvalidProblemError(
            f"invalid problem JSON at {where}: {first.message} "
            f"(see scheduler_py/model/problem.schema.json)"
        )
    for section in ("nodes", "topologies"):
        ids = [str(item["id"]) for item in document[section]]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise InvalidProblemError(
                f"invalid problem JSON at {section}: ids must be unique, found "
                f"{', '.join(map(repr, duplicates))} more than once"
            )


def load_document(text: str) -> dict[str, Any]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidProblemError(
            f"problem file is not JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from error
    validate_document(document)
    return document


def nodes_from_json(items: Iterable[Mapping[str, Any]]) -> tuple[Node, ...]:
    try:
        return _nodes_from_json(items)
    except (TypeError, ValueError) as error:
        raise InvalidProblemError(f"invalid node in problem JSON: {error}") from error


def _nodes_from_json(items: Iterable[Mapping[str, Any]]) -> tuple[Node, ...]:
    return tuple(
        Node(
            id=str(item["id"]),
            cpu=float(item["cpu"]),
            slots=int(item.get("slots", 4)),
            memory_mb=float(item.get("memory_mb", math.inf)),
            rack=str(item.get("rack", "default-rack")),
            bandwidth=item.get("bandwidth"),
            rack_uplink=item.get("rack_uplink"),
            speed=float(item.get("speed", 1.0)),
        )
        for item in items
    )


def topology_from_json(item: Mapping[str, Any]) -> Topology:
    try:
        components = tuple(
            Component(
                id=str(c["id"]),
                parallelism=int(c["parallelism"]),
                cpu=float(c.get("cpu", 0.0)),
                memory_mb=float(c.get("memory_mb", 0.0)),
                is_spout=bool(c.get("is_spout", False)),
                is_system=bool(c.get("is_system", False)),
            )
            for c in item["components"]
        )
        edges = tuple(
            Edge(
                str(e["from"]),
                str(e["to"]),
                float(e.get("traffic", 0.0)),
                str(e.get("grouping", "shuffle")),
            )
            for e in item.get("edges", ())
        )
        pair_traffic = {
            (str(p["from"]), str(p["to"])): float(p["traffic"])
            for p in item.get("pair_traffic", ())
        }
        topology = Topology(
            id=str(item["id"]),
            name=str(item.get("name", item["id"])),
            components=components,
            edges=edges,
            workers=int(item.get("workers", 1)),
            executor_cpu={str(k): float(v) for k, v in item.get("executor_cpu", {}).items()},
            pair_traffic=pair_traffic,
        )
    except ValueError as error:
        raise InvalidProblemError(f"topology {item.get('id')!r}: {error}") from error
    known = set(topology.executor_by_id)
    named = set(topology.executor_cpu) | {e for pair in pair_traffic for e in pair}
    if unknown := sorted(named - known):
        raise InvalidProblemError(
            f"topology {topology.id!r}: measured costs name unknown executor(s) {unknown[:5]}; "
            f"executor ids are 'component#index' with index < parallelism"
        )
    return topology


def current_from_json(topology: Topology, item: Mapping[str, Any]) -> Placement | None:
    if "current" not in item:
        return None
    return placement_from_assignment(topology, item["current"])


def placement_from_assignment(topology: Topology, assignment: Mapping[str, list[str]]) -> Placement:
    node_of = {}
    for component, nodes in assignment.items():
        comp = topology.component_by_id.get(component)
        if comp is None or len(nodes) != comp.parallelism:
            raise InvalidProblemError(
                f"topology {topology.id!r}: current placement of {component!r} must list "
                f"one node per executor ({comp.parallelism if comp else '?'} expected), "
                f"found {len(nodes)}"
            )
        for index, node in enumerate(nodes):
            node_of[executor_id(component, index)] = str(node)
    return Placement(topology.id, node_of)


def assignment_to_json(topology: Topology, placement: Placement) -> dict[str, list[str]]:
    return {
        comp.id: [placement.node_of[e.id] for e in topology.executors_of(comp.id)]
        for comp in topology.components
    }


def workers_to_json(topology: Topology, placement: Placement) -> dict[str, list[int]]:
    return {
        comp.id: [placement.worker_key(e.id)[1] for e in topology.executors_of(comp.id)]
        for comp in topology.components
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def result_to_json(
    algorithm: str,
    planned: Iterable[tuple[Topology, Placement, Evaluation]],
    summary: Mapping[str, Any],
    extra: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``scheduler-py plan`` output document; ``extra`` adds fields to a topology's
    summary (its traffic bound and gap)."""
    planned = list(planned)
    extra = extra or {}
    return {
        "algorithm": algorithm,
        "assignment": {t.id: assignment_to_json(t, p) for t, p, _ in planned},
        "workers": {t.id: workers_to_json(t, p) for t, p, _ in planned},
        "summary": _jsonable(summary),
        "topologies": {
            t.id: {
                "summary": _jsonable(ev.summary() | dict(extra.get(t.id, {}))),
                "report": _jsonable(dict(p.report)),
            }
            for t, p, ev in planned
        },
    }
