"""Aggregate documents (contract ``docs/monitoring-format.md`` §4) from the Spark tables:
parsing and validating window znodes on the driver, one document per topology, and fitting a
document into a znode. Spark-free, so the documents can be built and tested without a
session; ``monitoring/job.py`` runs the job around it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler_py.monitoring.records import (
    CorruptRecord,
    WindowRecord,
    encode,
    parse_window,
)

if TYPE_CHECKING:
    from scheduler_py.monitoring.zk import RawWindow

VERSION = 1
"""Version of the aggregate document."""
AGGREGATE_BUDGET = 900_000
"""Bytes of gzip an aggregate znode may take (below ZooKeeper's 1 MB ``jute.maxbuffer``)."""


@dataclass
class Tables:
    """The collected aggregate rows (plain dicts), all topologies."""

    workers: list[dict] = field(default_factory=list)
    executors: list[dict] = field(default_factory=list)
    pairs: list[dict] = field(default_factory=list)
    components: list[dict] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)


@dataclass
class Parsed:
    """The outcome of parsing every window znode read in one run."""

    records: list[WindowRecord] = field(default_factory=list)
    corrupt: Counter = field(default_factory=Counter)
    """topology id -> corrupt records"""
    reasons: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    """topology id -> a few "path: reason" lines"""


ParseCache = dict["RawWindow", "WindowRecord | CorruptRecord"]
"""Outcomes of earlier parses, by raw window (the aggregation parses each znode once)."""


FUTURE_SLACK_MS = 60_000
"""How far in the future a window may end (clock skew between hosts) before it is refused."""


def parse_windows(
    windows: Iterable[RawWindow],
    keep_reasons: int = 5,
    cache: ParseCache | None = None,
    now_ms: int | None = None,
) -> Parsed:
    """Parse and validate raw window znodes; a record must name the topology and worker of
    the znode it was published under and (given ``now_ms``) must not end more than
    :data:`FUTURE_SLACK_MS` in the future — it would otherwise sit in every sliding window
    until its date. With ``cache``, a window parsed before is not parsed again, and the
    cache ends up holding exactly ``windows``."""
    parsed = Parsed()
    outcomes: ParseCache = {}
    for window in windows:
        outcome = cache.get(window) if cache is not None else None
        if outcome is None:
            outcome = _parse(window)
        outcomes[window] = outcome
        if (
            now_ms is not None
            and isinstance(outcome, WindowRecord)
            and outcome.window_end_ms > now_ms + FUTURE_SLACK_MS
        ):
            outcome = CorruptRecord(
                f"window ends at {outcome.window_end_ms}, {outcome.window_end_ms - now_ms} ms "
                f"in the future (more than {FUTURE_SLACK_MS} ms: a wrong clock?)"
            )
        if isinstance(outcome, CorruptRecord):
            error = outcome
            parsed.corrupt[window.topology_id] += 1
            if len(parsed.reasons[window.topology_id]) < keep_reasons:
                parsed.reasons[window.topology_id].append(f"{window.worker}/{window.name}: {error}")
            continue
        parsed.records.append(outcome)
    if cache is not None:
        cache.clear()
        cache.update(outcomes)
    return parsed


def _parse(window: RawWindow) -> WindowRecord | CorruptRecord:
    try:
        record = parse_window(window.data)
        if record.topology_id != window.topology_id:
            raise CorruptRecord(
                f"record of topology {record.topology_id} under {window.topology_id}"
            )
        if record.worker != window.worker:
            raise CorruptRecord(f"record of worker {record.worker} under {window.worker}")
    except CorruptRecord as error:
        return error
    return record


def _round(value: float | None, digits: int = 4) -> float:
    return 0.0 if value is None else round(float(value), digits)


def build_documents(
    tables: Tables,
    topologies: Iterable[str],
    now_ms: int,
    window_ms: int,
    corrupt: Mapping[str, int] | None = None,
    traffic: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """One contract §4 document per topology (``change`` is filled by :func:`apply_change`).
    ``traffic``: per topology, the counts-mode fields of
    :meth:`~scheduler_py.monitoring.traffic_source.TopologyTraffic.document_fields`
    (``traffic_source``, ``declared_edges``, ``execute_ms`` per component, …); ``None``: the
    version-1 document without them."""
    corrupt = corrupt or {}
    by_topology: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for kind in ("workers", "executors", "pairs", "components", "edges"):
        for row in getattr(tables, kind):
            by_topology[row["topology_id"]][kind].append(row)
    documents = {}
    for topology_id in sorted(set(topologies) | set(by_topology)):
        rows = by_topology[topology_id]
        document = _document(topology_id, rows, now_ms, window_ms, corrupt.get(topology_id, 0))
        if traffic is not None:
            _add_traffic_fields(document, traffic.get(topology_id))
        documents[topology_id] = document
    return documents


def _add_traffic_fields(document: dict[str, Any], fields: Mapping[str, Any] | None) -> None:
    """The counts-mode fields; a component's ``execute_ms`` goes into its entry."""
    if not fields:
        document["traffic_source"] = "exact" if document["pairs"] else "none"
        return
    fields = dict(fields)
    latency = fields.pop("execute_ms", {})
    document.update(fields)
    if document["traffic_source"] == "none" and document["pairs"]:
        document["traffic_source"] = "exact"
    for component, value in latency.items():
        if component in document["components"]:
            document["components"][component]["execute_ms"] = value


def _document(
    topology_id: str, rows: Mapping[str, list[dict]], now_ms: int, window_ms: int, corrupt: int
) -> dict[str, Any]:
    workers = sorted(rows["workers"], key=lambda w: (w["supervisor_id"], w["port"]))
    live = [w for w in workers if w["records"] > 0]
    starts = [w["window_start_ms"] for w in live]
    ends = [w["window_end_ms"] for w in live]
    last_seen = max((w["last_seen_ms"] for w in workers), default=0)
    executors = [
        {
            "task_start": e["task_start"],
            "task_end": e["task_end"],
            "component": e["component"],
            "cpu_percent": _round(e["cpu_percent"]),
            "thread_cpu_percent": _round(e["thread_cpu_percent"]),
            "subprocess_cpu_percent": _round(e["subprocess_cpu_percent"]),
            "host": e["host"],
            "port": e["port"],
            "supervisor_id": e["supervisor_id"],
            "seconds": _round(e["covered_ms"] / 1000.0, 3),
            "windows": e["windows"],
        }
        for e in sorted(rows["executors"], key=lambda e: (e["task_start"], e["task_end"]))
    ]
    pairs = [
        {
            "src": [p["src_start"], p["src_end"]],
            "dst": [p["dst_start"], p["dst_end"]],
            "src_component": p["src_component"],
            "dst_component": p["dst_component"],
            "tuples_per_s": _round(p["tuples_per_s"]),
            "bytes_per_s": _round(p["bytes_per_s"]),
        }
        for p in sorted(
            rows["pairs"],
            key=lambda p: (p["src_start"], p["src_end"], p["dst_start"], p["dst_end"]),
        )
    ]
    components = {
        c["component"]: {
            "executors": c["executors"],
            "cpu_percent": _round(c["cpu_percent"]),
            "cpu_cv": _round(c["cpu_cv"]),
            "in_tuples_per_s": _round(c["in_tuples_per_s"]),
            "in_bytes_per_s": _round(c["in_bytes_per_s"]),
            "out_tuples_per_s": _round(c["out_tuples_per_s"]),
            "out_bytes_per_s": _round(c["out_bytes_per_s"]),
            "in_tuples_cv": _round(c["in_tuples_cv"]),
        }
        for c in sorted(rows["components"], key=lambda c: c["component"])
    }
    edges = [
        {
            "from": e["from"],
            "to": e["to"],
            "tuples_per_s": _round(e["tuples_per_s"]),
            "bytes_per_s": _round(e["bytes_per_s"]),
            "pairs": e["pairs"],
        }
        for e in sorted(rows["edges"], key=lambda e: (e["from"], e["to"]))
    ]
    return {
        "v": VERSION,
        "topology_id": topology_id,
        "computed_at_ms": now_ms,
        "window_ms": window_ms,
        "window_start_ms": min(starts) if starts else last_seen,
        "window_end_ms": max(ends) if ends else last_seen,
        "windows": max((w["records"] for w in workers), default=0),
        "executors": executors,
        "pairs": pairs,
        "components": components,
        "edges": edges,
        "workers": [
            {
                "supervisor_id": w["supervisor_id"],
                "host": w["host"],
                "port": w["port"],
                "records": w["records"],
                "cpu_percent": _round(_percent(w["worker_cpu_ms"], w["covered_ms"])),
                "overhead_cpu_percent": _round(_percent(w["overhead_cpu_ms"], w["covered_ms"])),
            }
            for w in live
        ],
        "missing": [
            {
                "supervisor_id": w["supervisor_id"],
                "host": w["host"],
                "port": w["port"],
                "last_seen_ms": w["last_seen_ms"],
            }
            for w in workers
            if w["records"] == 0
        ],
        "records": sum(w["records"] for w in workers),
        "records_retained": sum(w["kept"] for w in workers),
        "corrupt_records": corrupt,
        "duplicate_records": sum(w["valid"] - w["kept"] for w in workers),
        "truncated_pairs": sum(w["truncated_pairs"] for w in workers),
        "change": {"l1_relative": 0.0, "reference_computed_at_ms": now_ms},
    }


def _percent(cpu_ms: float | None, covered_ms: float | None) -> float:
    return 100.0 * cpu_ms / covered_ms if cpu_ms is not None and covered_ms else 0.0


def fit_znode(document: dict[str, Any], budget: int = AGGREGATE_BUDGET) -> bytes:
    """The gzip bytes of ``document``, dropping the smallest pairs (by tuples/s) until they
    fit ``budget``; the number dropped goes to ``truncated_output_pairs``."""
    data = encode(document)
    if len(data) <= budget:
        return data
    pairs = sorted(document["pairs"], key=lambda p: p["tuples_per_s"], reverse=True)
    keep = len(pairs)
    while len(data) > budget and keep > 0:
        keep = int(keep * min(0.9, budget / len(data)))
        trimmed = dict(document, pairs=pairs[:keep], truncated_output_pairs=len(pairs) - keep)
        data = encode(trimmed)
    document["pairs"] = pairs[:keep]
    document["truncated_output_pairs"] = len(pairs) - keep
    return data
