"""The cluster as the API shows it: supervisors by host and rack with slots, declared and
measured CPU, supervisors Nimbus blacklisted this round (with the topologies still placed on
them), supervisors the placements name but Storm no longer reports, the brain's
health and whether its automatic trigger runs (``trigger``, ``scheduler_py/reconfig/pause.py``).
Pure: built from the brain's status (``scheduler_py/scheduling/status.py``) and the
aggregates (``docs/monitoring-format.md`` §4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler_py.dashboard.cache import BrainReading


def brain_health(reading: BrainReading, now: float) -> dict[str, Any]:
    status = reading.status or {}
    stamp = status.get("timestamp_ms")
    return {
        "status": reading.health,
        "error": reading.error,
        "fetched_at": reading.fetched_at,
        "version": status.get("brain_version"),
        "last_round": status.get("round"),
        "last_round_age_s": round(now - stamp / 1000, 3) if isinstance(stamp, int) else None,
        "round_latency_ms": _ms(status.get("round_seconds")),
        "rounds_seen": status.get("rounds_seen"),
        "fallbacks_last_round": status.get("fallbacks_last_round"),
        "fallbacks_total": status.get("fallbacks_total"),
    }


def cluster(
    reading: BrainReading, aggregates: Mapping[str, Mapping[str, Any] | None], now: float
) -> dict[str, Any]:
    status = reading.status or {}
    measured = _measured_cpu_by_supervisor(aggregates)
    names = {t.get("id"): t.get("name") for t in status.get("topologies", [])}
    supervisors = []
    for sup in status.get("supervisors", []):
        slots = sup.get("slots", [])
        used = [s for s in slots if s.get("topology_id")]
        total = float(sup.get("total_cpu", 0.0))
        supervisors.append(
            {
                "id": sup.get("id"),
                "host": sup.get("host"),
                "rack": sup.get("rack"),
                "slots_total": len(slots),
                "slots_used": len(used),
                "slots_free": len(slots) - len(used),
                "slots": [s | {"topology_name": names.get(s.get("topology_id"))} for s in slots],
                "cpu_capacity": total,
                "cpu_declared_used": round(total - float(sup.get("available_cpu", total)), 3),
                "cpu_measured": measured.get(sup.get("id")),
                "memory_mb_total": sup.get("total_memory_mb"),
                "memory_mb_available": sup.get("available_memory_mb"),
            }
        )
    known = {s["id"] for s in supervisors}
    placed = _placed_supervisors(status)
    blacklisted = status.get("blacklisted_supervisors")
    listed = {str(b.get("id")): b for b in blacklisted or [] if isinstance(b, dict)}
    return {
        "brain": brain_health(reading, now),
        "storm_version": status.get("storm_version"),
        "supervisors": supervisors,
        "racks": sorted({str(s["rack"]) for s in supervisors if s["rack"]}),
        "missing_supervisors": sorted(set(placed) - known - set(listed)),
        "blacklist_reported": blacklisted is not None,
        "blacklisted_supervisors": [
            {
                "id": sid,
                "host": entry.get("host"),
                "placed_topologies": sorted({names.get(t, t) for t in placed.get(sid, ())}),
            }
            for sid, entry in sorted(listed.items())
        ],
        "blacklisted_hosts": list(status.get("blacklisted_hosts") or []),
        "rejected_topologies": dict(status.get("rejected", {})),
        "trigger": status.get("trigger"),
    }


def _measured_cpu_by_supervisor(
    aggregates: Mapping[str, Mapping[str, Any] | None],
) -> dict[str, float]:
    result: dict[str, float] = {}
    for aggregate in aggregates.values():
        for executor in (aggregate or {}).get("executors", []):
            key = executor.get("supervisor_id")
            cpu = executor.get("cpu_percent")
            if key and isinstance(cpu, int | float):
                result[key] = round(result.get(key, 0.0) + float(cpu), 3)
    return result


def _placed_supervisors(status: Mapping[str, Any]) -> dict[str, set[str]]:
    """Supervisor id -> ids of the topologies whose running placement names it."""
    result: dict[str, set[str]] = {}
    for topology in status.get("topologies", []):
        for row in topology.get("current", []):
            if len(row) == 5:
                result.setdefault(str(row[3]), set()).add(topology.get("id"))
    return result


def _ms(seconds: Any) -> float | None:
    return round(seconds * 1000, 3) if isinstance(seconds, int | float) else None
