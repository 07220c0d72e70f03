"""One topology as the API shows it: placement grouped host → worker → executors, edges
with their traffic and whether they cross workers or hosts, per-executor CPU, the
executor-pair traffic matrix (sparse), the component × component traffic matrix and the cost
basis. Pure: built from one topology of the brain's status
(``scheduler_py/scheduling/status.py``) and its aggregate as
:func:`scheduler_py.dashboard.aggregate_shape.clean` leaves it.

Pair edges and the executor matrix show the ``max_pairs`` busiest executor pairs (tuples/s):
a topology of 1,000 executors has up to 1,000² communicating pairs (tens of thousands survive
the aggregate's ZooKeeper budget), which no browser draws usefully and which made the answer
megabytes long (``scheduler-py bench dashboard_api``). ``pairs_total`` and ``pairs_shown`` say
how many there were; the component matrix always sums every pair (``component_traffic`` of
the cleaned aggregate, components as the aggregate names them, ``"(unknown)"`` otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Executor = tuple[int, int]

MAX_PAIRS = 1000
"""Executor pairs the answer shows by default (the busiest by tuples/s)."""


def find(status: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    """The topology whose id or name is ``key``."""
    for topology in (status or {}).get("topologies", []):
        if key in (topology.get("id"), topology.get("name")):
            return topology
    return None


def summary(topology: Mapping[str, Any]) -> dict[str, Any]:
    decision = topology.get("decision") or {}
    rows = topology.get("current", [])
    return {
        "id": topology.get("id"),
        "name": topology.get("name"),
        "num_workers": topology.get("num_workers"),
        "executors": len(rows),
        "workers_used": len({(r[3], r[4]) for r in rows}),
        "decision": decision.get("decision"),
        "algorithm": decision.get("algorithm"),
        "storm_status": decision.get("reason"),
    }


def detail(
    topology: Mapping[str, Any],
    hosts: Mapping[str, str],
    aggregate: Mapping[str, Any] | None,
    now: float,
    max_pairs: int = MAX_PAIRS,
) -> dict[str, Any]:
    """``hosts``: supervisor id → host; ``max_pairs``: the busiest executor pairs shown."""
    declared = {c["id"]: c.get("cpu_per_executor") for c in topology.get("components", [])}
    measured = {
        (e["task_start"], e["task_end"]): e.get("cpu_percent")
        for e in (aggregate or {}).get("executors", [])
        if "task_start" in e and "task_end" in e
    }
    where: dict[Executor, tuple[str, str]] = {}
    placement: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for start, end, component, supervisor, port in topology.get("current", []):
        host = hosts.get(supervisor, f"(missing supervisor {supervisor})")
        worker = f"{supervisor}:{port}"
        where[(start, end)] = (host, worker)
        placement.setdefault(host, {}).setdefault(worker, []).append(
            {
                "executor": f"{start}-{end}",
                "component": component,
                "cpu_declared": declared.get(component),
                "cpu_measured": measured.get((start, end)),
            }
        )
    pairs = (aggregate or {}).get("pairs", [])
    busiest = _busiest(pairs, max_pairs)
    edges = _pair_edges(busiest, where)
    return summary(topology) | {
        "placement": [
            {"host": host, "workers": [{"worker": w, "executors": ex} for w, ex in ws.items()]}
            for host, ws in sorted(placement.items())
        ],
        "component_edges": _component_edges(topology),
        "edges": edges,
        "pairs_total": len(pairs),
        "pairs_shown": len(edges),
        "matrix": _matrix(edges),
        "component_matrix": _component_matrix((aggregate or {}).get("component_traffic", [])),
        "cost_basis": _cost_basis(aggregate, now),
        "plan_summary": (topology.get("decision") or {}).get("summary", {}),
    }


def _busiest(pairs: list[Mapping[str, Any]], limit: int) -> list[Mapping[str, Any]]:
    """The ``limit`` busiest pairs (the cleaned aggregate lists them busiest first)."""
    return pairs[:limit]


def _pair_edges(
    pairs: list[Mapping[str, Any]], where: Mapping[Executor, tuple[str, str]]
) -> list[dict[str, Any]]:
    edges = []
    for pair in pairs:
        src, dst = pair["src"], pair["dst"]
        a, b = where.get(src), where.get(dst)
        edges.append(
            {
                "src": f"{src[0]}-{src[1]}",
                "dst": f"{dst[0]}-{dst[1]}",
                "tuples_per_s": pair.get("tuples_per_s"),
                "bytes_per_s": pair.get("bytes_per_s"),
                "inter_worker": None if a is None or b is None else a[1] != b[1],
                "inter_host": None if a is None or b is None else a[0] != b[0],
            }
        )
    return edges


def _component_edges(topology: Mapping[str, Any]) -> list[dict[str, str]]:
    return [
        {"from": i["component"], "to": c["id"], "stream": i.get("stream", "default")}
        for c in topology.get("components", [])
        for i in c.get("inputs", [])
        if not c.get("is_system")
    ]


def _matrix(edges: list[dict[str, Any]]) -> dict[str, Any]:
    labels = sorted({e["src"] for e in edges} | {e["dst"] for e in edges}, key=_task_order)
    index = {label: i for i, label in enumerate(labels)}
    cells = [[index[e["src"]], index[e["dst"]], e["tuples_per_s"]] for e in edges]
    return {"executors": labels, "cells": cells, "unit": "tuples/s"}


def _component_matrix(traffic: list[Mapping[str, Any]]) -> dict[str, Any]:
    def label(name: Any) -> str:
        return name if isinstance(name, str) else "(unknown)"

    labels = sorted({label(t["src"]) for t in traffic} | {label(t["dst"]) for t in traffic})
    index = {name: i for i, name in enumerate(labels)}
    cells = [
        [index[label(t["src"])], index[label(t["dst"])], round(t["tuples_per_s"], 6)]
        for t in traffic
    ]
    return {"components": labels, "cells": cells, "unit": "tuples/s"}


def _task_order(label: str) -> tuple[int, int]:
    start, _, end = label.partition("-")
    return int(start), int(end)


def _cost_basis(aggregate: Mapping[str, Any] | None, now: float) -> dict[str, Any]:
    if not aggregate:
        return {"basis": "declared", "aggregate_age_s": None, "windows": None}
    computed = aggregate.get("computed_at_ms")
    age = round(now - computed / 1000, 3) if isinstance(computed, int | float) else None
    return {"basis": "measured", "aggregate_age_s": age, "windows": aggregate.get("windows")}
