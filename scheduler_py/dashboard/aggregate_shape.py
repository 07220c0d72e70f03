"""An aggregate (``docs/monitoring-format.md`` §4) reduced to the fields the dashboard shows,
each of the documented type: entries that are not are dropped, numbers that are not become
``None``. Aggregates come from ZooKeeper, so the views must not trust their shape."""

from __future__ import annotations

import math
from typing import Any


def clean(document: Any) -> dict[str, Any] | None:
    """The shown part of ``document``; ``None`` when it is not a JSON object."""
    if not isinstance(document, dict):
        return None
    executors = [_executor(e) for e in _list(document.get("executors"))]
    pairs = [_pair(p) for p in _list(document.get("pairs"))]
    windows = document.get("windows")
    return {
        "computed_at_ms": _number(document.get("computed_at_ms")),
        "windows": windows if isinstance(windows, int) and not isinstance(windows, bool) else None,
        "executors": [e for e in executors if e is not None],
        "pairs": [p for p in pairs if p is not None],
    }


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _executor(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        return None
    start, end = _task(entry.get("task_start")), _task(entry.get("task_end"))
    if start is None or end is None:
        return None
    supervisor = entry.get("supervisor_id")
    return {
        "task_start": start,
        "task_end": end,
        "cpu_percent": _number(entry.get("cpu_percent")),
        "supervisor_id": supervisor if isinstance(supervisor, str) else None,
    }


def _pair(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        return None
    src, dst = _range(entry.get("src")), _range(entry.get("dst"))
    if src is None or dst is None:
        return None
    return {
        "src": src,
        "dst": dst,
        "tuples_per_s": _number(entry.get("tuples_per_s")),
        "bytes_per_s": _number(entry.get("bytes_per_s")),
    }


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
