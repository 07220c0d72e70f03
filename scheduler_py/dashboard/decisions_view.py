"""The decisions timeline: the brain's plan log (one entry per topology decision,
``scheduler_py/service/server.py``) and the reconfiguration history
(``scheduler_py/reconfig/history.py``), merged and ordered by time, newest first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def timeline(
    plans: Iterable[Mapping[str, Any]],
    histories: Iterable[Mapping[str, Any]],
    limit: int,
) -> list[dict[str, Any]]:
    items = [_plan(entry) for entry in plans] + [_reconfiguration(e) for e in histories]
    items.sort(key=lambda item: item["time_ms"] or 0, reverse=True)
    return items[:limit]


def _plan(entry: Mapping[str, Any]) -> dict[str, Any]:
    summary = entry.get("summary") or {}
    return {
        "kind": "plan",
        "time_ms": entry.get("timestamp_ms"),
        "topology_id": entry.get("topology_id"),
        "round": entry.get("round"),
        "decision": entry.get("decision"),
        "algorithm": entry.get("algorithm"),
        "reason": entry.get("reason"),
        "round_ms": _ms(entry.get("round_seconds")),
        "summary": summary if isinstance(summary, dict) else {},
    }


def _reconfiguration(entry: Mapping[str, Any]) -> dict[str, Any]:
    # History.entries (scheduler_py/reconfig/history.py) merges a reconfiguration's events
    # into one entry with ``started``/``updated`` times; a single event has ``at``
    at = entry.get("started", entry.get("at"))
    return {
        "kind": "reconfiguration",
        "time_ms": int(at * 1000) if isinstance(at, int | float) else None,
        "topology": entry.get("topology"),
        "id": entry.get("id"),
        "state": entry.get("state"),
        "trigger": entry.get("trigger"),
        "pause_secs": entry.get("pause_secs"),
        "workers_restarted": (entry.get("report") or {}).get("workers_restarted"),
        "predicted_gain": (entry.get("report") or {}).get("predicted_gain"),
        "measured_gain": entry.get("measured"),
        "reason": entry.get("reason"),
        "entry": dict(entry),
    }


def _ms(seconds: Any) -> float | None:
    return round(seconds * 1000, 3) if isinstance(seconds, int | float) else None
