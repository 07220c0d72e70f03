"""The change signal (``docs/monitoring-format.md`` §4, ``change``): how far a topology's
measured costs moved from a stored reference, which the reconfiguration trigger compares with
θ (docs/reconfiguration.md).

x is the vector of CPU % per executor and tuples/s per executor pair (:func:`change_vector`);
the signal is ``‖x − x_ref‖₁ / ‖x_ref‖₁`` computed for each of the two parts against its own
reference, then averaged (:func:`l1_relative`). The aggregation job
(``monitoring/job.py``) fills every aggregate's ``change`` with :func:`apply_change`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from scheduler_py.monitoring.records import encode

VERSION = 1
"""Version of the reference document (``<root>/reference/<topology-id>``)."""
REFERENCE_BUDGET = 900_000
"""Bytes of gzip a reference znode may take (below ZooKeeper's 1 MB ``jute.maxbuffer``)."""


def _range_key(start_end: Iterable[int]) -> str:
    start, end = start_end
    return f"{start}-{end}"


def change_vector(document: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """x of the change signal: CPU % per executor and tuples/s per executor pair."""
    return {
        "cpu": {
            _range_key((e["task_start"], e["task_end"])): float(e["cpu_percent"])
            for e in document.get("executors", ())
        },
        "pairs": {
            f"{_range_key(p['src'])}>{_range_key(p['dst'])}": float(p["tuples_per_s"])
            for p in document.get("pairs", ())
        },
    }


def l1_relative(
    x: Mapping[str, Mapping[str, float]], ref: Mapping[str, Mapping[str, float]]
) -> float | None:
    """The change signal: the mean over the parts (CPU % per executor, tuples/s per pair) of
    each part's own ``‖x − ref‖₁ / ‖ref‖₁`` over the union of its keys (a key absent on one
    side counts as 0). Each part is relative to its own reference, so θ means the same for
    every topology whatever its traffic-to-CPU ratio (summed in one norm,
    traffic dominated and an 80-point CPU drop moved the signal by 0.3). A part whose
    reference is all zeros counts 1 (100 %) when it is not zero now and is left out when it
    is; ``None`` when every part's reference is all zeros and x is not (undefined). A
    reference trimmed to fit its znode carries ``pairs_floor`` (see :func:`fit_reference`)."""
    changes: list[float] = []
    referenced = moved = False
    floor = ref.get("pairs_floor")
    for part in ("cpu", "pairs"):
        now, before = x.get(part, {}), ref.get(part, {})
        keys = set(now) | set(before)
        if part == "pairs" and isinstance(floor, (int, float)):
            # a trimmed reference (fit_reference) does not know pairs below its floor: a pair
            # absent from it that is still below the floor is not a change
            keys = {k for k in keys if k in before or now.get(k, 0.0) > floor}
        distance = sum(abs(now.get(k, 0.0) - before.get(k, 0.0)) for k in keys)
        norm = sum(abs(v) for v in before.values())
        referenced, moved = referenced or norm > 0.0, moved or distance > 0.0
        if norm > 0.0:
            changes.append(distance / norm)
        elif distance > 0.0:
            changes.append(1.0)
    if not referenced:
        return None if moved else 0.0
    return sum(changes) / len(changes)


def reference_document(document: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "v": VERSION,
        "topology_id": document["topology_id"],
        "computed_at_ms": document["computed_at_ms"],
        **change_vector(document),
    }


def fit_reference(reference: dict[str, Any], budget: int = REFERENCE_BUDGET) -> dict[str, Any]:
    """``reference``, with only its heaviest pairs when its encoding exceeds ``budget`` bytes
    (a ZooKeeper znode holds under 1 MB; at thousands of executors the pairs do not fit). The
    trimmed reference records ``pairs_floor``, the rate of the lightest pair it kept, and
    ``truncated_pairs``; :func:`l1_relative` then ignores pairs below the floor it never saw."""
    data = encode(reference)
    if len(data) <= budget:
        return reference
    pairs = sorted(reference["pairs"].items(), key=lambda item: item[1], reverse=True)
    keep = len(pairs)
    trimmed = reference
    while len(data) > budget and keep > 1:
        keep = max(1, int(keep * min(0.9, budget / len(data))))
        kept = dict(pairs[:keep])
        trimmed = {
            **reference,
            "pairs": kept,
            "pairs_floor": pairs[keep - 1][1],
            "truncated_pairs": len(pairs) - keep,
        }
        data = encode(trimmed)
    return trimmed


def apply_change(
    document: dict[str, Any], reference: Mapping[str, Any] | None, reset: bool = False
) -> dict[str, Any] | None:
    """Fill ``document["change"]``; returns the reference to store, or ``None`` to keep the
    stored one. Without a reference (or with ``reset``), or when the stored one is
    unusable, the document becomes the reference (distance 0). An aggregate without
    records never becomes a reference. A stored reference is unusable when it is not of the
    shape :func:`usable_reference` checks: ZooKeeper may hold anything, and one corrupt
    reference must not stop the run (every topology's aggregate would go unwritten)."""
    if reset or not usable_reference(reference):
        if document.get("records", 0) == 0:
            document["change"] = {"l1_relative": None, "reference_computed_at_ms": None}
            return None
        document["change"] = {
            "l1_relative": 0.0,
            "reference_computed_at_ms": document["computed_at_ms"],
        }
        return reference_document(document)
    assert reference is not None
    document["change"] = {
        "l1_relative": _maybe_round(l1_relative(change_vector(document), reference)),
        "reference_computed_at_ms": reference.get("computed_at_ms"),
    }
    return None


def usable_reference(reference: Any) -> bool:
    """Whether a stored reference (read from ZooKeeper, so of any shape) can be compared
    with: ``cpu`` and ``pairs`` map names to finite numbers, ``pairs_floor`` and
    ``computed_at_ms`` are numbers when present."""
    if not isinstance(reference, Mapping):
        return False
    parts = [reference.get("cpu"), reference.get("pairs")]
    if not all(isinstance(part, Mapping) for part in parts):
        return False
    values = [v for part in parts for v in part.values()]
    values += [reference[k] for k in ("pairs_floor", "computed_at_ms") if k in reference]
    return all(_finite(v) for v in values)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _maybe_round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
