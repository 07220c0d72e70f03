"""Has a deactivated topology drained? Compare two polls of its workers' live counters
(``docs/monitoring-format.md`` §5; read by ``scheduler_py/monitoring/live.py``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from scheduler_py.scheduling.interfaces import LiveWorker


@dataclass(frozen=True)
class DrainCheck:
    """The outcome of comparing two polls of a topology's live counters."""

    drained: bool
    pending: int
    """tuple trees in flight now, summed over the current workers"""
    moved: int
    """activity between the polls (a restarted or new worker counts as moved)"""
    workers: int
    """workers in the current poll"""
    missing: tuple[str, ...]
    """expected workers absent from the current or the previous poll"""
    stale: tuple[str, ...]
    """expected workers whose ``ts_ms`` did not advance between the polls"""
    detail: str
    """one human-readable line"""


def _plural(n: int, word: str) -> str:
    return f"{word}{'' if n == 1 else 's'}"


def check_drain(
    previous: Mapping[str, LiveWorker] | None,
    current: Mapping[str, LiveWorker],
    expected: Collection[str] | None = None,
) -> DrainCheck:
    """Whether a (deactivated) topology has drained between two polls of :func:`read_live`.

    Drained iff there is a previous poll; every expected worker (default: the keys of
    ``previous``) is present in both polls and its ``ts_ms`` advanced (else it is
    ``stale``); nothing is pending in the current poll; no tuple moved in between (``moved``
    = sum over the current workers of their activity growth; a worker whose ``started_ms``
    changed counts with all its activity and at least 1, a worker absent from ``previous``
    with all its activity); and at least one worker published counters (an empty poll
    proves nothing: the monitor may be off). Pure: no I/O, no clock.
    """
    pending = sum(w.pending for w in current.values())
    workers = len(current)
    if expected is not None:
        keys = sorted(set(expected))
    elif previous is not None:
        keys = sorted(previous)
    else:
        keys = sorted(current)

    if previous is None:
        missing = tuple(k for k in keys if k not in current)
        parts = ["first poll: nothing to compare yet"]
        if pending:
            parts.append(f"pending {pending} tuple {_plural(pending, 'tree')}")
        if missing:
            parts.append(f"missing {_plural(len(missing), 'worker')} {', '.join(missing)}")
        return DrainCheck(False, pending, 0, workers, missing, (), ", ".join(parts))

    missing = tuple(k for k in keys if k not in current or k not in previous)
    stale = tuple(
        k for k in keys if k in current and k in previous and current[k].ts_ms <= previous[k].ts_ms
    )
    moved = 0
    for key, now in current.items():
        before = previous.get(key)
        if before is None:
            moved += now.activity
        elif now.started_ms != before.started_ms:
            moved += max(1, now.activity)
        else:
            moved += abs(now.activity - before.activity)

    drained = bool(current) and not missing and not stale and pending == 0 and moved == 0
    if drained:
        detail = (
            f"drained: nothing pending, nothing moved since last poll on "
            f"{workers} {_plural(workers, 'worker')}"
        )
    else:
        parts = []
        if not current:
            parts.append("no live counters published (is the worker monitor enabled?)")
        if pending:
            parts.append(f"pending {pending} tuple {_plural(pending, 'tree')}")
        if moved:
            parts.append(f"{moved} {_plural(moved, 'tuple')} moved since last poll")
        if missing:
            parts.append(f"missing {_plural(len(missing), 'worker')} {', '.join(missing)}")
        if stale:
            parts.append(f"stale {_plural(len(stale), 'worker')} {', '.join(stale)}")
        detail = ", ".join(parts)
    return DrainCheck(drained, pending, moved, workers, missing, stale, detail)
