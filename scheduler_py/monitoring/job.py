"""The aggregation job: window records in ZooKeeper → the aggregate of contract §4.

One run (:meth:`AggregationJob.run_once`):

1. cleanup: with the list of running topologies (from Nimbus), every monitoring znode of a
   topology that no longer runs is deleted;
2. read every window znode of every running topology (:mod:`.zk`), parse and validate it
   on the driver (:mod:`.records`): corrupt ones (bad gzip/JSON, missing fields, negative
   numbers, a record published under another worker's znode…) are skipped and counted;
3. aggregate with Spark DataFrames, all topologies in one job
   (:func:`scheduler_py.monitoring.aggregate.aggregate_frames` says what is computed);
4. change signal (``monitoring/change.py``): the mean of ``‖x − ref‖₁ / ‖ref‖₁`` over
   x = CPU % per executor and x = tuples/s per pair, against
   ``<root>/reference/<topology-id>`` (the first aggregate becomes the reference;
   ``reset_reference`` replaces it);
5. write ``<root>/aggregate/<topology-id>`` (gzip JSON; pairs beyond the znode limit are
   dropped, smallest first, and counted in ``truncated_output_pairs``), optionally append
   the tables to a Parquet dataset, and delete window znodes older than the retention.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scheduler_py.monitoring.aggregate import (
    aggregate_frames,
    collect,
    frames_from_rows,
    write_parquet,
)
from scheduler_py.monitoring.change import apply_change, fit_reference, usable_reference
from scheduler_py.monitoring.documents import (
    ParseCache,
    Tables,
    build_documents,
    fit_znode,
    parse_windows,
)
from scheduler_py.monitoring.records import flatten

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from scheduler_py.monitoring.zk import MonitorStore, RawWindow

log = logging.getLogger(__name__)

DEFAULT_WINDOW_MS = 60_000
DEFAULT_RETENTION_MS = 300_000
"""30 windows of the monitor's default 10 s (``scheduler.monitor.retention.windows``)."""


@dataclass
class JobConfig:
    window_ms: int = DEFAULT_WINDOW_MS
    retention_ms: int = DEFAULT_RETENTION_MS
    parquet: Path | None = None


@dataclass
class RunSummary:
    """What one run did (the CLI prints it)."""

    documents: dict[str, dict[str, Any]]
    deleted_topologies: list[str]
    deleted_windows: int
    read_windows: int
    seconds: float
    reasons: dict[str, list[str]]
    new_windows: int = 0
    """window znodes not seen by an earlier run of this job (read and parsed this run)"""
    skipped: bool = False
    """no new window since the last run: no Spark work, the aggregates were left as they are"""
    phases: dict[str, float] = field(default_factory=dict)
    """seconds per phase: ``zookeeper`` (listing and reading), ``parse``, ``spark``, ``write``"""


class AggregationJob:
    """Aggregates every running topology's windows into its aggregate znode.

    The job keeps what it read: a window znode is read and parsed once, and a run that finds
    no window it has not seen does no Spark work and rewrites nothing (the aggregates keep
    their ``computed_at_ms``, so the brain's freshness rule sees that nothing new arrived).
    """

    def __init__(self, spark: SparkSession, store: MonitorStore, config: JobConfig) -> None:
        self.spark = spark
        self.store = store
        self.config = config
        self._windows: dict[str, RawWindow] = {}
        self._parsed: ParseCache = {}
        self._runs = 0

    def run_once(
        self,
        now_ms: int | None = None,
        running: set[str] | None = None,
        reset_reference: bool = False,
    ) -> RunSummary:
        """One aggregation. ``running``: topology ids Nimbus lists (``None`` = unknown: no
        topology is deleted and every monitored one is aggregated)."""
        started = time.perf_counter()
        phases: dict[str, float] = {}
        now = int(time.time() * 1000) if now_ms is None else int(now_ms)
        deleted = []
        if running is not None:
            for topology_id in sorted(self.store.known_topologies() - set(running)):
                self.store.delete_topology(topology_id)
                deleted.append(topology_id)
                log.info("deleted the monitoring znodes of %s (no longer running)", topology_id)
        topologies = self.store.topologies()
        raw: list[RawWindow] = []
        for topology_id in topologies:
            raw.extend(self.store.load_windows(topology_id, self._windows))
        seen = {self.store.window_path(window): window for window in raw}
        new_windows = len(seen.keys() - self._windows.keys())
        self._windows = seen
        phases["zookeeper"] = time.perf_counter() - started
        skip = self._runs > 0 and new_windows == 0 and not reset_reference
        self._runs += 1
        documents: dict[str, dict[str, Any]] = {}
        reasons: dict[str, list[str]] = {}
        if not skip:
            documents, reasons = self._aggregate(raw, topologies, now, reset_reference, phases)
        mark = time.perf_counter()
        deleted_windows = self.store.delete_old_windows(
            raw, now - self.config.retention_ms, topologies
        )
        phases["write"] = phases.get("write", 0.0) + time.perf_counter() - mark
        return RunSummary(
            documents,
            deleted,
            deleted_windows,
            len(raw),
            time.perf_counter() - started,
            reasons,
            new_windows=new_windows,
            skipped=skip,
            phases=phases,
        )

    def _aggregate(
        self,
        raw: list[RawWindow],
        topologies: list[str],
        now: int,
        reset_reference: bool,
        phases: dict[str, float],
    ) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
        mark = time.perf_counter()
        parsed = parse_windows(raw, cache=self._parsed, now_ms=now)
        for topology_id, reasons in parsed.reasons.items():
            log.warning(
                "%s: %d corrupt record(s) skipped, e.g. %s",
                topology_id,
                parsed.corrupt[topology_id],
                "; ".join(reasons[:3]),
            )
        window = self.config.window_ms
        flat = flatten(parsed.records, traffic_after_ms=now - window)
        phases["parse"] = time.perf_counter() - mark
        mark = time.perf_counter()
        if flat.records:
            result = aggregate_frames(frames_from_rows(self.spark, flat, now - window))
            tables = collect(result)
            if self.config.parquet is not None:
                write_parquet(result, self.config.parquet, now)
        else:
            tables = Tables()
        phases["spark"] = time.perf_counter() - mark
        mark = time.perf_counter()
        documents = build_documents(tables, topologies, now, window, parsed.corrupt)
        for topology_id, document in documents.items():
            stored = self.store.read_reference(topology_id)
            if stored is not None and not usable_reference(stored):
                log.warning(
                    "%s: ignoring the change-signal reference in %s: not numbers by executor "
                    "and pair (corrupt?); the next aggregate with records replaces it",
                    topology_id,
                    self.store.reference_path(topology_id),
                )
            new_reference = apply_change(document, stored, reset_reference)
            if new_reference is not None:
                self.store.write_reference(topology_id, fit_reference(new_reference))
            self.store.write_aggregate(topology_id, fit_znode(document))
        phases["write"] = time.perf_counter() - mark
        return documents, dict(parsed.reasons)
