"""An aggregate as text tables (per-executor CPU, per-edge traffic, missing workers, change
signal), for ``scheduler-py metrics`` (``scheduler_py/cli/metrics.py``) and the demo."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def interworker_traffic(document: Mapping[str, Any]) -> tuple[float, float]:
    """(tuples/s between executors measured in different workers, all tuples/s) of an
    aggregate; pairs whose executors it does not locate are left out of both."""
    worker = {
        (ex["task_start"], ex["task_end"]): (ex.get("host"), ex.get("port"))
        for ex in document.get("executors", [])
    }
    remote = total = 0.0
    for pair in document.get("pairs", []):
        src = worker.get(tuple(pair["src"]))
        dst = worker.get(tuple(pair["dst"]))
        if src is None or dst is None:
            continue
        total += pair["tuples_per_s"]
        if src != dst:
            remote += pair["tuples_per_s"]
    return remote, total


def _bytes_unknown(document: Mapping[str, Any], edge: Mapping[str, Any]) -> bool:
    """Whether an edge's bytes/s is unknown rather than 0: pairs estimated from Storm's counts
    carry tuples only, bytes where exact-mode records sampled tuple sizes
    (``docs/monitoring-format.md``, counts-mode fields)."""
    estimated = document.get("traffic_source") in ("estimated", "mixed")
    return estimated and edge["tuples_per_s"] > 0 and not edge["bytes_per_s"]


def render(document: Mapping[str, Any], now_ms: int) -> str:
    age = (now_ms - int(document.get("computed_at_ms", now_ms))) / 1000
    seconds = (document["window_end_ms"] - document["window_start_ms"]) / 1000
    lines = [
        f"measured over {seconds:.0f} s ({document.get('windows', '?')} windows), "
        f"computed {age:.0f} s ago from {document.get('records', 0)} records "
        f"({document.get('corrupt_records', 0)} corrupt, "
        f"{document.get('duplicate_records', 0)} duplicate)",
        "",
        f"{'component':14s} {'tasks':>7s}  {'worker':18s} {'CPU % of a core':>16s}",
    ]
    for ex in sorted(document["executors"], key=lambda e: (e["task_start"], e["task_end"])):
        where = f"{ex.get('host', '?')}:{ex.get('port', '?')}"
        start, end = ex["task_start"], ex["task_end"]
        tasks = str(start) if start == end else f"{start}-{end}"
        lines.append(f"{ex['component']:14s} {tasks:>7s}  {where:18s} {ex['cpu_percent']:16.1f}")
    lines += ["", f"{'edge':30s} {'tuples/s':>10s} {'bytes/s':>10s}"]
    for edge in sorted(document["edges"], key=lambda e: -e["tuples_per_s"]):
        name = f"{edge['from']} -> {edge['to']}"
        size = "n/a" if _bytes_unknown(document, edge) else f"{edge['bytes_per_s']:.0f}"
        lines.append(f"{name:30s} {edge['tuples_per_s']:10.1f} {size:>10s}")
    missing = document.get("missing") or []
    if missing:
        lines.append("")
        lines.append(
            "missing workers (no records in the last window): "
            + ", ".join(f"{m['supervisor_id']}:{m['port']}" for m in missing)
        )
    remote, total = interworker_traffic(document)
    if total > 0:
        lines.append("")
        lines.append(
            f"inter-worker traffic: {remote:.1f} of {total:.1f} tuples/s "
            f"({remote / total:.0%}) between executors in different workers"
        )
    wire = document.get("wire")
    if isinstance(wire, Mapping):
        lines.append("")
        lines.append(_wire_line(wire))
    change = (document.get("change") or {}).get("l1_relative")
    lines.append("")
    lines.append(
        "change signal vs reference: "
        + ("n/a (first aggregate)" if change is None else f"{change:.3f} (relative L1)")
    )
    return "\n".join(lines)


def _wire_line(wire: Mapping[str, Any]) -> str:
    """The workers' Netty totals and the tuple size they give (``monitoring/wire_size.py``)."""
    line = (
        f"between workers: {wire.get('sent_messages_per_s', 0):.1f} messages/s, "
        f"{wire.get('written_bytes_per_s', 0):.0f} bytes/s written by Netty"
    )
    payload = wire.get("payload_bytes")
    if payload is None:
        return line + "; tuple size not estimated (too few user tuples between workers)"
    return line + f"; {payload:.0f} B per user tuple (acking messages taken out)"
