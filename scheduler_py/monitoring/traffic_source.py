"""Where each topology's pair traffic comes from in one aggregation: the hooks' exact traffic
rows, or the estimate from Storm's counts (``monitoring/pair_estimate.py``), or both.

:func:`estimate_topologies` runs on the driver before the Spark job. For every topology it
takes the records the Spark job will count (in the window, one per worker and window end:
the highest ``seq``, then the first read, as ``aggregate.aggregate_frames`` keeps them),
estimates the pairs of the sources Storm counted, and returns them as traffic rows
(:data:`~scheduler_py.monitoring.records.TRAFFIC_COLUMNS`) attached to the source task's
latest record in the window: ``tuples = rate × the seconds the task was observed``, so the
Spark job's per-second rate (tuples over the source executor's observed time) gives the
estimated rate back. Exact traffic rows go to Spark unchanged. The aggregate's additions
(:meth:`TopologyTraffic.document_fields`, contract §4 "Counts mode") say which source priced
the pairs and which edges stay declared.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_py.monitoring.pair_estimate import PairEstimate, estimate_pairs
from scheduler_py.monitoring.records import WindowRecord
from scheduler_py.monitoring.wire_size import WireSize, wire_size

STREAM = "estimated"
"""The stream name of an estimated traffic row (the Spark job merges streams)."""


@dataclass
class TopologyTraffic:
    """One topology's estimate and the traffic rows it adds."""

    estimate: PairEstimate
    rows: list[tuple] = field(default_factory=list)
    modes: tuple[str, ...] = ()
    sample_rate: float | None = None
    wire: WireSize | None = None
    """the workers' Netty totals and the tuple size they give (``monitoring/wire_size.py``)"""

    def document_fields(self) -> dict[str, Any]:
        """The aggregate's counts-mode fields (contract §4)."""
        estimate = self.estimate
        fields: dict[str, Any] = {
            "traffic_source": estimate.source,
            "monitor_modes": list(self.modes),
            "declared_edges": [
                {
                    "from": edge.source,
                    "to": edge.target,
                    "stream": edge.stream,
                    "grouping": edge.grouping,
                    "reason": edge.reason,
                    "tuples_per_s": None
                    if edge.tuples_per_s is None
                    else round(edge.tuples_per_s, 4),
                }
                for edge in estimate.declared
            ],
        }
        if self.sample_rate is not None:
            fields["sample_rate"] = self.sample_rate
        if estimate.execute_ms:
            fields["execute_ms"] = {c: round(v, 4) for c, v in sorted(estimate.execute_ms.items())}
        if self.wire is not None:
            fields["wire"] = self.wire.document_fields()
        return fields


def kept_in_window(records: Sequence[WindowRecord], cut_ms: int) -> dict[int, WindowRecord]:
    """``record id -> record`` (ids = positions in ``records``, as ``records.flatten`` numbers
    them) of the records the Spark job counts: ``window_end_ms > cut_ms``, duplicates of a
    worker's window dropped (highest ``seq``, then the first)."""
    best: dict[tuple[str, str, int, int], int] = {}
    for index, record in enumerate(records):
        key = (record.topology_id, record.supervisor_id, record.port, record.window_end_ms)
        if key not in best or record.seq > records[best[key]].seq:
            best[key] = index
    return {i: records[i] for i in sorted(best.values()) if records[i].window_end_ms > cut_ms}


def estimate_topologies(records: Sequence[WindowRecord], cut_ms: int) -> dict[str, TopologyTraffic]:
    """Per topology with records in the window: the estimate and its traffic rows."""
    kept = kept_in_window(records, cut_ms)
    in_window: dict[str, list[tuple[int, WindowRecord]]] = defaultdict(list)
    for record_id, record in kept.items():
        in_window[record.topology_id].append((record_id, record))
    history: dict[str, list[WindowRecord]] = defaultdict(list)
    for index, record in enumerate(records):
        if index not in kept:
            history[record.topology_id].append(record)
    result = {}
    for topology_id, entries in in_window.items():
        current = [record for _, record in entries]
        estimate = estimate_pairs(current, history[topology_id])
        rates = [r.sample_rate for r in current if r.mode == "counts" and r.sample_rate is not None]
        result[topology_id] = TopologyTraffic(
            estimate,
            _rows(estimate, entries),
            tuple(sorted({r.mode for r in current})),
            min(rates) if rates else None,
            wire_size(current, estimate.tuples_per_s),
        )
    return result


def _rows(estimate: PairEstimate, entries: list[tuple[int, WindowRecord]]) -> list[tuple]:
    latest: dict[int, tuple[int, int]] = {}
    for record_id, record in entries:
        for executor in record.executors:
            for task in executor.tasks:
                if task not in latest or record.window_end_ms > latest[task][1]:
                    latest[task] = (record_id, record.window_end_ms)
    rows = []
    for (src, dst), rate in sorted(estimate.tuples_per_s.items()):
        if src not in estimate.estimated_sources or src not in latest:
            continue
        seconds = estimate.seconds.get(src, 0.0)
        size = estimate.bytes_per_s.get((src, dst), 0.0)
        rows.append((latest[src][0], src, dst, STREAM, rate * seconds, size * seconds))
    return rows
