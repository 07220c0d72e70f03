"""What the dashboard reads and steers through, handed in by ``scheduler_py/cli/dashboard.py``
(the ports are in ``scheduler_py/scheduling/dashboard_ports.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_py.dashboard import aggregate_shape
from scheduler_py.dashboard.cache import BrainReading, StatusCache
from scheduler_py.dashboard.limits import WhatIfGate
from scheduler_py.dashboard.prefetch import Prefetcher
from scheduler_py.scheduling.dashboard_ports import (
    AggregatePort,
    BrainPort,
    PlanLogPort,
    SourceUnavailable,
)


@dataclass
class Sources:
    brain: BrainPort
    plan_log: PlanLogPort | None = None
    aggregates: AggregatePort | None = None
    token: str | None = None
    """the bearer token mutating requests need; ``None``: the dashboard is read-only"""
    clock: Callable[[], float] = time.time
    prefetch_secs: float | None = None
    """re-read the aggregates every this many seconds off the request path
    (:mod:`scheduler_py.dashboard.prefetch`); ``None``: read them in the request"""
    whatif: WhatIfGate = field(default_factory=WhatIfGate)
    """the what-ifs' concurrency cap and time budget (:mod:`scheduler_py.dashboard.limits`)"""
    cache: StatusCache = field(init=False)
    _cleaned: dict[str, tuple[Any, dict[str, Any] | None]] = field(init=False)
    _prefetcher: Prefetcher | None = field(init=False)

    def __post_init__(self) -> None:
        self.cache = StatusCache(self.brain, clock=self.clock)
        self._cleaned = {}
        self._prefetcher = None
        if self.prefetch_secs is not None and self.aggregates is not None:
            self._prefetcher = Prefetcher(self._read_aggregate, self.prefetch_secs)

    def reading(self) -> BrainReading:
        return self.cache.read()

    def aggregate(self, topology_id: str) -> tuple[Mapping[str, Any] | None, str | None]:
        """``(aggregate or None, error or None)``; the aggregate reduced to well-typed fields
        (:func:`scheduler_py.dashboard.aggregate_shape.clean`)."""
        if self.aggregates is None:
            return None, None
        if self._prefetcher is not None:
            return self._prefetcher.get(topology_id)
        return self._read_aggregate(topology_id)

    def _read_aggregate(self, topology_id: str) -> tuple[Mapping[str, Any] | None, str | None]:
        assert self.aggregates is not None
        try:
            document = self.aggregates.aggregate(topology_id)
        except SourceUnavailable as error:
            return None, str(error)
        if document is None:
            return None, None
        cleaned = self._clean(topology_id, document)
        if cleaned is None:
            return None, f"the aggregate of {topology_id} is not a JSON object; ignored"
        return cleaned, None

    def _clean(self, topology_id: str, document: Mapping[str, Any]) -> dict[str, Any] | None:
        """:func:`aggregate_shape.clean`, once per document: the ZooKeeper source hands out the
        same cached object for seconds (``ZooKeeperAggregates.cache_secs``), and cleaning tens
        of thousands of pairs on every request was most of ``/cluster``'s time."""
        last = self._cleaned.get(topology_id)
        if last is not None and last[0] is document:
            return last[1]
        cleaned = aggregate_shape.clean(document)
        self._cleaned[topology_id] = (document, cleaned)
        return cleaned

    def plans(self, limit: int) -> tuple[Sequence[Mapping[str, Any]], str | None]:
        if self.plan_log is None:
            return [], "no plan log configured (start the dashboard with --plan-log PATH)"
        try:
            return self.plan_log.entries(limit), None
        except SourceUnavailable as error:
            return [], str(error)
