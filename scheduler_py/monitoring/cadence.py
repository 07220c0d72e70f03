"""How often each topology is aggregated: a topology whose costs are steady is aggregated less
often, and again at once when its counts move (``scheduler-py aggregate --every``).

After each aggregation of a topology, :class:`Cadence` keeps a *signature* of what the
aggregate was computed from (:func:`signature`: per executor CPU ms/s, per task emits and
executes per second by stream, per task pair exact tuples/s). On a later run it compares the
signature of the windows that arrived since then with that reference:

* a worker left the window or joined it (a supervisor died, a rebalance): aggregated now (the
  aggregate's ``missing`` changes), the period back to every run;
* moved more than ``threshold`` (relative L1, ``‖new − ref‖₁ / ‖ref‖₁``): aggregated now, and
  the period drops back to every run;
* steady: aggregated when the period is over; each steady aggregation doubles the period, up
  to ``max_ms`` (the CLI keeps it within the brain's freshness rule,
  ``scheduler.brain.metrics.max.age.secs``, 180 s by default: ``monitoring/measured.py``).

Everything here runs on the driver from parsed records; a topology that is not due costs no
Spark work.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scheduler_py.monitoring.records import WindowRecord

DEFAULT_THRESHOLD = 0.2
"""A 20 % move of the counts since the last aggregation makes a topology due at once: above
the window-to-window noise of a small topology's counts and CPU (one 10 s window of a steady
topology moved up to 11 % in ``tests/test_monitoring_counts_zk.py``), below the re-plan trigger's
θ = 0.25 (``scheduler_py/reconfig/trigger.py``)."""


def signature(records: Iterable[WindowRecord]) -> dict[str, float]:
    """Rates of ``records`` (one topology): CPU ms/s per executor, emits and executes per
    second per task and stream or input, exact tuples/s per task pair."""
    totals: dict[str, float] = defaultdict(float)
    seconds: dict[str, float] = defaultdict(float)

    def add(key: str, value: float, span: float) -> None:
        totals[key] += value
        seconds[key] += span

    for record in records:
        span = record.duration_ms / 1000.0
        for e in record.executors:
            add(f"cpu {e.task_start}-{e.task_end}", e.thread_cpu_ms + e.subprocess_cpu_ms, span)
        for counts in record.task_counts:
            for stream, value in counts.emitted.items():
                add(f"emit {counts.task} {stream}", value, span)
            for key, value in counts.executed.items():
                add(f"exec {counts.task} {key}", value, span)
        for sample in record.traffic:
            add(f"pair {sample.src} {sample.dst}", sample.tuples, span)
    return {key: totals[key] / seconds[key] for key in totals if seconds[key] > 0}


def distance(new: Mapping[str, float], reference: Mapping[str, float]) -> float:
    """``‖new − ref‖₁ / ‖ref‖₁`` over the keys of ``new`` (the windows that arrived may come
    from some workers only): 0 when nothing is in ``new``; 1 when the reference is all zeros
    there and ``new`` is not."""
    scale = sum(abs(reference.get(k, 0.0)) for k in new)
    diff = sum(abs(value - reference.get(k, 0.0)) for k, value in new.items())
    if scale <= 0:
        return 0.0 if diff <= 0 else 1.0
    return diff / scale


@dataclass
class _State:
    aggregated_ms: int
    newest_end_ms: int
    reference: dict[str, float]
    period_ms: int
    workers: frozenset[str]


class Cadence:
    """Per topology: whether it is due this run (:meth:`due`), and what its aggregation
    leaves as the reference (:meth:`aggregated`). ``period_ms``: the job's own period
    (``--every``); ``max_ms``: the longest a steady topology waits; ``max_ms <= period_ms``
    turns stretching off."""

    def __init__(self, period_ms: int, max_ms: int, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.period_ms = period_ms
        self.max_ms = max_ms
        self.threshold = threshold
        self._state: dict[str, _State] = {}
        self._moved: dict[str, bool] = {}

    def due(self, topology_id: str, records: list[WindowRecord], now_ms: int) -> str | None:
        """Why the topology is aggregated this run, or ``None`` when it waits."""
        state = self._state.get(topology_id)
        if state is None or self.max_ms <= self.period_ms:
            self._moved[topology_id] = True
            return "every run" if state is not None else "first aggregation"
        workers = frozenset(r.worker for r in records)
        if workers != state.workers:
            self._moved[topology_id] = True
            gone, new = sorted(state.workers - workers), sorted(workers - state.workers)
            return f"workers changed (gone {gone or 'none'}, new {new or 'none'})"
        fresh = [r for r in records if r.window_end_ms > state.newest_end_ms]
        moved = distance(signature(fresh), state.reference) if fresh else 0.0
        if moved > self.threshold:
            self._moved[topology_id] = True
            return f"counts moved {moved:.0%} since the last aggregation"
        self._moved[topology_id] = False
        if now_ms - state.aggregated_ms >= state.period_ms:
            return f"steady ({moved:.0%}), period {state.period_ms / 1000:.0f} s over"
        return None

    def waiting(self, topology_id: str, now_ms: int) -> str:
        """How long a topology that is not due still waits (the CLI's line)."""
        state = self._state[topology_id]
        left = state.period_ms - (now_ms - state.aggregated_ms)
        return f"steady: next aggregation in {max(0, left) / 1000:.0f} s"

    def aggregated(self, topology_id: str, records: list[WindowRecord], now_ms: int) -> None:
        """Record the aggregation of ``records`` (the topology's records in the window)."""
        previous = self._state.get(topology_id)
        if self._moved.get(topology_id, True) or previous is None:
            period = self.period_ms
        else:
            period = min(self.max_ms, max(2 * previous.period_ms, 2 * self.period_ms))
        self._state[topology_id] = _State(
            aggregated_ms=now_ms,
            newest_end_ms=max((r.window_end_ms for r in records), default=0),
            reference=signature(records),
            period_ms=period,
            workers=frozenset(r.worker for r in records),
        )

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the state of topologies no longer monitored."""
        kept = set(keep)
        for topology_id in list(self._state):
            if topology_id not in kept:
                del self._state[topology_id]
