"""An aggregate (``docs/monitoring-format.md`` §4) reduced to the fields the dashboard shows,
each of the documented type: entries that are not are dropped, numbers that are not become
``None``. Aggregates come from ZooKeeper, so the views must not trust their shape.

The pairs come out busiest first (tuples/s) and summed per component pair
(``component_traffic``), so that a view can show the busiest few and the component matrix
without walking tens of thousands of pairs per request: the dashboard cleans each aggregate
once (``scheduler_py/dashboard/sources.py``)."""

from __future__ import annotations

import math
from typing import Any


def clean(document: Any) -> dict[str, Any] | None:
    """The shown part of ``document``; ``None`` when it is not a JSON object."""
    if not isinstance(document, dict):
        return None
    executors = [e for e in map(_executor, _list(document.get("executors"))) if e is not None]
    raw = [p for p in _list(document.get("pairs")) if isinstance(p, dict)]
    shown = [(p, entry) for p, entry in ((_pair(p), p) for p in raw) if p is not None]
    shown.sort(key=lambda item: item[0]["tuples_per_s"] or 0.0, reverse=True)
    windows = document.get("windows")
    return {
        "computed_at_ms": _number(document.get("computed_at_ms")),
        "windows": windows if isinstance(windows, int) and not isinstance(windows, bool) else None,
        "executors": executors,
        "pairs": [p for p, _ in shown],
        "component_traffic": _component_traffic(shown, executors),
    }


def _component_traffic(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]], executors: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Tuples/s per (source component, target component): a pair's component is its
    ``src_component``/``dst_component`` when given, else its executor's, else ``None``."""
    known = {(e["task_start"], e["task_end"]): e["component"] for e in executors}
    totals: dict[tuple[str | None, str | None], float] = {}
    for pair, entry in pairs:
        src, dst = entry.get("src_component"), entry.get("dst_component")
        key = (
            src if isinstance(src, str) else known.get(pair["src"]),
            dst if isinstance(dst, str) else known.get(pair["dst"]),
        )
        totals[key] = totals.get(key, 0.0) + (pair["tuples_per_s"] or 0.0)
    return [
        {"src": src, "dst": dst, "tuples_per_s": value}
        for (src, dst), value in sorted(
            totals.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))
        )
    ]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _executor(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        return None
    start, end = _task(entry.get("task_start")), _task(entry.get("task_end"))
    if start is None or end is None:
        return None
    supervisor = entry.get("supervisor_id")
    component = entry.get("component")
    return {
        "task_start": start,
        "task_end": end,
        "component": component if isinstance(component, str) else None,
        "cpu_percent": _number(entry.get("cpu_percent")),
        "supervisor_id": supervisor if isinstance(supervisor, str) else None,
    }


def _pair(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        return None
    src, dst = entry.get("src"), entry.get("dst")
    # an aggregate has tens of thousands of pairs: what JSON decodes (lists of two plain ints,
    # finite floats) takes the short way, anything else the checks of _range and _number
    if (
        type(src) is list
        and type(dst) is list
        and len(src) == 2
        and len(dst) == 2
        and type(src[0]) is int
        and type(src[1]) is int
        and type(dst[0]) is int
        and type(dst[1]) is int
    ):
        src, dst = (src[0], src[1]), (dst[0], dst[1])
    else:
        src, dst = _range(src), _range(dst)
        if src is None or dst is None:
            return None
    return {
        "src": src,
        "dst": dst,
        "tuples_per_s": _finite(entry.get("tuples_per_s")),
        "bytes_per_s": _finite(entry.get("bytes_per_s")),
    }


def _finite(value: Any) -> float | None:
    """:func:`_number`, at once for a finite float."""
    return value if type(value) is float and value - value == 0.0 else _number(value)


def _range(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    start, end = _task(value[0]), _task(value[1])
    return None if start is None or end is None else (start, end)


def _task(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
