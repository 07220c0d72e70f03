"""The warm-up before a cluster run's measured interval: until the topology's acked rate has
levelled off (``--set warmup=steady``, the default of a full run).

A topology's rate keeps rising well after its first acks while the worker JVMs compile
(C2) and their queues fill. On the emulated hosts (0.3 core each) the CPU-bound topologies ran
at 0.75–0.83× their later rate 30–95 s after their first acks and levelled off from about
150 s (docs/results/emulated-network/throughput-default/README.md, sixth set), so a fixed
30 s warm-up measured a rising rate, and a fixed warm-up long enough for them costs every
network-bound run minutes it does not need.

:func:`wait_levelled_off` samples the spouts' acked counts every :data:`POLL_S` and ends the
warm-up once the rate over the last :data:`WINDOW_S` is at most :data:`RISE_TOLERANCE` above
the rate over the window before it (a falling or flat rate has levelled off), no sooner than
:data:`SHORTEST_S` after the first acks, and at :data:`LONGEST_S` at the latest (the run then
records that its rate never levelled off). When the topology's executors move meanwhile (the
next stage of a brain re-plan, ``docs/reconfiguration.md``), the windows and both limits
count again from the move (up to :data:`LONGEST_WITH_MOVES_S` in all): before, the moved
executors' counts, which no longer change, kept the rate unknown until :data:`LONGEST_S`,
and the brain's Linear-CPU runs of ``throughput-default/c2-cpu-wire*.json`` were measured
as never levelled off. Nimbus's counts move only with the workers' heartbeats, so each
executor's count is timed by the poll that first saw it change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

STEADY = "steady"
"""``--set warmup=steady``"""
WINDOW_S = 90.0
"""Each of the two windows compared. One 10 s sample of the acked rate on the emulated hosts
varies by ±10–30 % (the sixth set's timelines). Replayed on those six timelines (the
``brain:monitored`` runs of ``c2-cpu-monitored.json``), 60 s windows ended the warm-up at
174–214 s, when one run still ran at 0.91× its rate measured later; 90 s windows at
228–260 s, at 0.95–1.02× (``tests/test_cluster_warmup.py``)."""
RISE_TOLERANCE = 0.05
"""How much faster the last window may run than the one before it and count as levelled off."""
SHORTEST_S = 2 * WINDOW_S
LONGEST_S = 600.0
LONGEST_WITH_MOVES_S = 2 * LONGEST_S
"""The latest a warm-up ends however often the topology moves while it runs (each move
starts the windows and :data:`LONGEST_S` again), so a topology re-placed over and over
cannot hold a run for ever."""
TYPICAL_S = 240.0
"""For the printed estimate only: a network-bound run levels off by :data:`SHORTEST_S`, a
CPU-bound one after about 250 s."""
POLL_S = 2.0

Counts = Callable[[], Mapping[str, int]]
Clock = Callable[[], float]


@dataclass
class AckedCounts:
    """Per executor, the (time first seen, acked count) of every change of its count."""

    changes: dict[str, list[tuple[float, int]]] = field(default_factory=dict)

    def record(self, now: float, counts: Mapping[str, int]) -> None:
        for executor, count in counts.items():
            seen = self.changes.setdefault(executor, [])
            if not seen or seen[-1][1] != count:
                seen.append((now, count))

    def rate(self, start: float, end: float) -> float | None:
        """Acked tuples/s over ``[start, end]``: per executor, between its first change at or
        after ``start`` and its last at or before ``end``, summed; ``None`` when an executor
        has not changed twice in the window (its heartbeats are not timed well enough)."""
        total = 0.0
        for seen in self.changes.values():
            inside = [(t, c) for t, c in seen if start <= t <= end]
            if len(inside) < 2:
                return None
            total += (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])
        return total if self.changes else None


def levelled_off(
    acked: AckedCounts, now: float, window_s: float = WINDOW_S, tolerance: float = RISE_TOLERANCE
) -> tuple[bool, float | None, float | None]:
    """Whether the rate over ``[now − window_s, now]`` is at most ``1 + tolerance`` times the
    rate over the window before it; returns (verdict, earlier rate, later rate)."""
    earlier = acked.rate(now - 2 * window_s, now - window_s)
    later = acked.rate(now - window_s, now)
    if earlier is None or later is None or earlier <= 0:
        return False, earlier, later
    return later <= (1 + tolerance) * earlier, earlier, later


def wait_levelled_off(
    counts: Counts,
    started_at: float,
    shortest_s: float = SHORTEST_S,
    longest_s: float = LONGEST_S,
    window_s: float = WINDOW_S,
    tolerance: float = RISE_TOLERANCE,
    poll_s: float = POLL_S,
    clock: Clock = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Sample ``counts()`` (``{executor: acked}``) until the rate has levelled off, counting
    from ``started_at`` (the first acks, or the end of a re-plan). Returns the run's record:
    ``warmup_levelled_off`` (``False`` when :data:`LONGEST_S` passed first), the seconds
    waited (``warmup_s``) and the two windows' rates when it stopped."""
    acked = AckedCounts()
    first_sample = clock()
    counted_from = started_at
    checks = moves = 0
    while True:
        now = clock()
        current = _read(counts)
        if current and acked.changes and set(current) != set(acked.changes):
            # re-placed while warming up (a later stage of the brain's plan): a rate across
            # the move means nothing, so both windows and the time limit start again
            acked, first_sample, counted_from = AckedCounts(), now, now
            moves += 1
        acked.record(now, current)
        waited = now - counted_from
        over = now - started_at >= LONGEST_WITH_MOVES_S
        if over or (waited >= shortest_s and now - first_sample >= 2 * window_s):
            verdict, earlier, later = levelled_off(acked, now, window_s, tolerance)
            checks += 1
            if verdict or waited >= longest_s or over:
                return {
                    "warmup_levelled_off": verdict,
                    "warmup_s": now - started_at,
                    "warmup_windows": {"earlier": earlier, "later": later},
                    "warmup_checks": checks,
                    "warmup_moves": moves,
                }
        sleep(poll_s)


def _read(counts: Counts) -> Mapping[str, int]:
    try:
        return counts()
    except Exception:  # Nimbus busy for a poll: the next poll reads the counts again
        return {}
