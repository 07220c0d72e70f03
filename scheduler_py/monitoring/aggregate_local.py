"""The aggregation's tables computed on the driver, in plain Python, for small inputs.

The same rules as the Spark query of :func:`scheduler_py.monitoring.aggregate.aggregate_frames`
(its module docstring lists them: duplicates, the sliding window, CPU %, pairs with the
destination-task map, components, edges, workers), row for row, including how missing values
behave there: a sum over nothing is ``None`` where Spark's ``sum`` is ``null``, a left join
without a match gives ``None``, and ``components`` fills its gaps with 0 as Spark's ``fillna(0)``.

Why a second path: a warm cycle of a topology with a hundred executors hands Spark a few
thousand rows, and Spark's fixed cost per cycle — analysing the DataFrame plan through Py4J
and running five small jobs — is then nearly all of the cycle's CPU (docs/monitoring.md,
"Monitoring cost"). Here the same rows take milliseconds. The job
(:mod:`scheduler_py.monitoring.job`) chooses this path below a row count and Spark above it;
``tests/test_monitoring_aggregate_local.py`` checks both paths give the same documents.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from scheduler_py.monitoring.documents import Tables
from scheduler_py.monitoring.records import (
    EXECUTOR_COLUMNS,
    RECORD_COLUMNS,
    TRAFFIC_COLUMNS,
    FlatRecords,
)

_R = {name: i for i, name in enumerate(RECORD_COLUMNS)}
_E = {name: i for i, name in enumerate(EXECUTOR_COLUMNS)}
_T = {name: i for i, name in enumerate(TRAFFIC_COLUMNS)}


def input_rows(flat: FlatRecords) -> int:
    """How many rows an aggregation of ``flat`` handles (what the job compares with its
    threshold for this path)."""
    return len(flat.records) + len(flat.executors) + len(flat.traffic)


def _sum(values: Iterable[float | int | None]) -> float | int | None:
    """Spark's ``sum``: nulls ignored, ``None`` when nothing is left."""
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _divide(numerator: float | None, denominator: float | int | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def _cv(values: list[float | None]) -> float:
    """Population coefficient of variation; 0 for a zero or missing mean (``aggregate._cv``)."""
    present = [v for v in values if v is not None]
    if not present:
        return 0.0
    mean = sum(present) / len(present)
    if not mean > 0:
        return 0.0
    variance = sum((v - mean) ** 2 for v in present) / len(present)
    return math.sqrt(variance) / mean


def aggregate_local(flat: FlatRecords, window_cut_ms: int) -> Tables:
    """The five tables of the aggregate for ``flat``; a record is in the window iff its
    ``window_end_ms`` is above ``window_cut_ms``."""
    records = flat.records
    kept_ids = _deduplicated(records)
    tables = Tables()
    tables.workers.extend(_workers(records, kept_ids, window_cut_ms))

    by_id = {row[_R["record_id"]]: row for row in records}
    kept = {rid: by_id[rid] for rid in kept_ids}
    current = {rid: row for rid, row in kept.items() if row[_R["window_end_ms"]] > window_cut_ms}
    executors = _executors(flat.executors, current)
    tables.executors.extend(executors)
    pairs = _pairs(flat, kept, current, executors)
    tables.pairs.extend(pairs)
    tables.components.extend(components_from(executors, pairs))
    tables.edges.extend(edges_from(pairs))
    return tables


def _deduplicated(records: list[tuple]) -> set[int]:
    """Record ids kept: per worker and ``window_end_ms`` the highest ``seq``, then the lowest
    ``record_id``."""
    best: dict[tuple, tuple] = {}
    for row in records:
        key = (
            row[_R["topology_id"]],
            row[_R["supervisor_id"]],
            row[_R["port"]],
            row[_R["window_end_ms"]],
        )
        rank = (-row[_R["seq"]], row[_R["record_id"]])
        if key not in best or rank < best[key]:
            best[key] = rank
    return {rank[1] for rank in best.values()}


def _workers(records: list[tuple], kept_ids: set[int], cut: int) -> list[dict[str, Any]]:
    groups: dict[tuple, list[tuple]] = defaultdict(list)
    for row in records:
        groups[(row[_R["topology_id"]], row[_R["supervisor_id"]], row[_R["port"]])].append(row)
    rows = []
    for (topology_id, supervisor_id, port), members in groups.items():
        inside = [
            r for r in members if r[_R["record_id"]] in kept_ids and r[_R["window_end_ms"]] > cut
        ]
        last = max(members, key=lambda r: r[_R["window_end_ms"]])
        rows.append(
            {
                "topology_id": topology_id,
                "supervisor_id": supervisor_id,
                "port": port,
                "valid": len(members),
                "kept": sum(1 for r in members if r[_R["record_id"]] in kept_ids),
                "last_seen_ms": last[_R["window_end_ms"]],
                "host": last[_R["host"]],
                "records": len(inside),
                "window_start_ms": min((r[_R["window_start_ms"]] for r in inside), default=None),
                "window_end_ms": max((r[_R["window_end_ms"]] for r in inside), default=None),
                "covered_ms": _sum(
                    r[_R["window_end_ms"]] - r[_R["window_start_ms"]] for r in inside
                ),
                "worker_cpu_ms": _sum(r[_R["worker_cpu_ms"]] for r in inside),
                "overhead_cpu_ms": _sum(r[_R["overhead_cpu_ms"]] for r in inside),
                "truncated_pairs": _sum(r[_R["truncated_pairs"]] for r in inside) or 0,
            }
        )
    return rows


def _executors(rows: list[tuple], current: dict[int, tuple]) -> list[dict[str, Any]]:
    groups: dict[tuple, list[tuple[tuple, tuple]]] = defaultdict(list)
    for row in rows:
        record = current.get(row[_E["record_id"]])
        if record is not None:
            key = (
                record[_R["topology_id"]],
                row[_E["task_start"]],
                row[_E["task_end"]],
                row[_E["component"]],
            )
            groups[key].append((row, record))
    result = []
    for (topology_id, task_start, task_end, component), members in groups.items():
        thread = sum(row[_E["thread_cpu_ms"]] for row, _ in members)
        subprocess = sum(row[_E["subprocess_cpu_ms"]] for row, _ in members)
        covered = sum(r[_R["window_end_ms"]] - r[_R["window_start_ms"]] for _, r in members)
        _, at = max(members, key=lambda member: member[1][_R["window_end_ms"]])
        result.append(
            {
                "topology_id": topology_id,
                "task_start": task_start,
                "task_end": task_end,
                "component": component,
                "cpu_percent": _divide((thread + subprocess) * 100.0, covered),
                "thread_cpu_percent": _divide(thread * 100.0, covered),
                "subprocess_cpu_percent": _divide(subprocess * 100.0, covered),
                "covered_ms": covered,
                "windows": len(members),
                "supervisor_id": at[_R["supervisor_id"]],
                "host": at[_R["host"]],
                "port": at[_R["port"]],
            }
        )
    return result


def _task_map(rows: list[tuple], kept: dict[int, tuple]) -> dict[tuple[str, int], tuple]:
    """(topology, task) -> (start, end, component) of the executor that most recently listed
    the task in a kept record (ties: the lowest ``task_start``)."""
    best: dict[tuple[str, int], tuple[tuple, tuple]] = {}
    for row in rows:
        record = kept.get(row[_E["record_id"]])
        if record is None:
            continue
        start, end = row[_E["task_start"]], row[_E["task_end"]]
        rank = (-record[_R["window_end_ms"]], start)
        value = (start, end, row[_E["component"]])
        for task in range(start, end + 1):
            key = (record[_R["topology_id"]], task)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, value)
    return {key: value for key, (_, value) in best.items()}


def _pairs(
    flat: FlatRecords,
    kept: dict[int, tuple],
    current: dict[int, tuple],
    executors: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    task_map = _task_map(flat.executors, kept)
    by_record: dict[int, list[tuple]] = defaultdict(list)
    for row in flat.executors:
        if row[_E["record_id"]] in current:
            by_record[row[_E["record_id"]]].append(row)
    sums: dict[tuple, list[float]] = {}
    for row in flat.traffic:
        record = current.get(row[_T["record_id"]])
        if record is None:
            continue
        topology_id = record[_R["topology_id"]]
        src, dst = row[_T["src"]], row[_T["dst"]]
        sources = [
            (e[_E["task_start"]], e[_E["task_end"]], e[_E["component"]])
            for e in by_record[row[_T["record_id"]]]
            if e[_E["task_start"]] <= src <= e[_E["task_end"]]
        ] or [(src, src, "?")]
        target = task_map.get((topology_id, dst), (dst, dst, "?"))
        for source in sources:
            key = (topology_id, *source, *target)
            total = sums.setdefault(key, [0.0, 0.0])
            total[0] += row[_T["tuples"]]
            total[1] += row[_T["bytes"]]
    observed: dict[tuple, list[int]] = defaultdict(list)
    for e in executors:
        observed[(e["topology_id"], e["task_start"], e["task_end"])].append(e["covered_ms"])
    pairs = []
    for key, (tuples, size) in sums.items():
        topology_id, src_start, src_end, src_component, dst_start, dst_end, dst_component = key
        for covered in observed.get((topology_id, src_start, src_end)) or [None]:
            pairs.append(
                {
                    "topology_id": topology_id,
                    "src_start": src_start,
                    "src_end": src_end,
                    "src_component": src_component,
                    "dst_start": dst_start,
                    "dst_end": dst_end,
                    "dst_component": dst_component,
                    "tuples_per_s": _divide(tuples * 1000.0, covered),
                    "bytes_per_s": _divide(size * 1000.0, covered),
                }
            )
    return pairs


def components_from(
    executors: list[dict[str, Any]], pairs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The ``components`` table from the ``executors`` and ``pairs`` tables (Spark's result
    too: :func:`scheduler_py.monitoring.aggregate.collect` derives it here)."""
    inbound: dict[tuple, list[float | None]] = defaultdict(list)
    into: dict[tuple, list[dict]] = defaultdict(list)
    out: dict[tuple, list[dict]] = defaultdict(list)
    for p in pairs:
        inbound[(p["topology_id"], p["dst_start"], p["dst_end"])].append(p["tuples_per_s"])
        into[(p["topology_id"], p["dst_component"])].append(p)
        out[(p["topology_id"], p["src_component"])].append(p)
    spread: dict[tuple, list[tuple[float | None, float]]] = defaultdict(list)
    for e in executors:
        received = _sum(inbound.get((e["topology_id"], e["task_start"], e["task_end"]), []))
        spread[(e["topology_id"], e["component"])].append(
            (e["cpu_percent"], 0.0 if received is None else received)
        )

    def zero(value: float | None) -> float:
        return 0.0 if value is None else value

    rows = []
    for key in dict.fromkeys([*spread, *into, *out]):
        members = spread.get(key, [])
        entering, leaving = into.get(key, []), out.get(key, [])
        rows.append(
            {
                "topology_id": key[0],
                "component": key[1],
                "executors": len(members),
                "cpu_percent": zero(_sum(cpu for cpu, _ in members)),
                "cpu_cv": _cv([cpu for cpu, _ in members]),
                "in_tuples_cv": _cv([tuples for _, tuples in members]),
                "in_tuples_per_s": zero(_sum(p["tuples_per_s"] for p in entering)),
                "in_bytes_per_s": zero(_sum(p["bytes_per_s"] for p in entering)),
                "out_tuples_per_s": zero(_sum(p["tuples_per_s"] for p in leaving)),
                "out_bytes_per_s": zero(_sum(p["bytes_per_s"] for p in leaving)),
            }
        )
    return rows


def edges_from(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``edges`` table from the ``pairs`` table."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for p in pairs:
        groups[(p["topology_id"], p["src_component"], p["dst_component"])].append(p)
    return [
        {
            "topology_id": topology_id,
            "from": source,
            "to": target,
            "tuples_per_s": _sum(p["tuples_per_s"] for p in members),
            "bytes_per_s": _sum(p["bytes_per_s"] for p in members),
            "pairs": len(members),
        }
        for (topology_id, source, target), members in groups.items()
    ]
