"""The aggregation job: window records in ZooKeeper → the aggregate of contract §4.

One run (:meth:`AggregationJob.run_once`):

1. cleanup: with the list of running topologies (from Nimbus), every monitoring znode of a
   topology that no longer runs is deleted;
2. read every window znode of every running topology (:mod:`.zk`), parse and validate it
   on the driver (:mod:`.records`): corrupt ones (bad gzip/JSON, missing fields, negative
   numbers, a record published under another worker's znode…) are skipped and counted;
3. pair traffic: the hooks' exact traffic rows where records carry them, else (counts mode,
   version 2) the estimate from Storm's per-task counts (:mod:`.traffic_source`,
   :mod:`.pair_estimate`); an edge the estimate cannot price gets one WARNING (once per edge
   and reason) and is listed in the aggregate's ``declared_edges``;
   then aggregate, all topologies at once: with Spark DataFrames
   (:func:`scheduler_py.monitoring.aggregate.aggregate_frames` says what is computed), or,
   when the input is at most ``JobConfig.driver_max_rows`` rows and no Parquet history is
   written, with the same rules on the driver (:mod:`.aggregate_local`: Spark's fixed cost
   per cycle is most of a small cycle's CPU). Spark's part of a run is bounded by
   ``JobConfig.spark_timeout_ms`` (:func:`~scheduler_py.monitoring.spark.bounded_jobs`): when
   Spark fails or runs past it, that run aggregates on the driver, with a warning, and appends
   nothing to the Parquet history, so the brain's aggregates stay fresh while Spark is down;
4. change signal (``monitoring/change.py``): the mean of ``‖x − ref‖₁ / ‖ref‖₁`` over
   x = CPU % per executor and x = tuples/s per pair, against
   ``<root>/reference/<topology-id>`` (the first aggregate becomes the reference;
   ``reset_reference`` replaces it);
5. a topology whose counts are steady since its last aggregation waits, its period doubling up
   to ``max_period_ms``, and is aggregated at once when they move (:mod:`.cadence`); a run in
   which no topology is due does no Spark work;
6. write ``<root>/aggregate/<topology-id>`` (gzip JSON; pairs beyond the znode limit are
   dropped, smallest first, and counted in ``truncated_output_pairs``), optionally append
   the tables to a Parquet dataset, and delete window znodes older than the retention.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scheduler_py.monitoring.aggregate import (
    aggregate_frames,
    collect,
    frames_from_rows,
    write_parquet,
)
from scheduler_py.monitoring.aggregate_local import aggregate_local, input_rows
from scheduler_py.monitoring.cadence import Cadence
from scheduler_py.monitoring.change import apply_change, fit_reference, usable_reference
from scheduler_py.monitoring.documents import (
    ParseCache,
    Tables,
    build_documents,
    fit_znode,
    parse_windows,
)
from scheduler_py.monitoring.records import FlatRecords, WindowRecord, flatten
from scheduler_py.monitoring.spark import SparkDeadline, bounded_jobs
from scheduler_py.monitoring.traffic_source import estimate_topologies, kept_in_window

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from scheduler_py.monitoring.zk import MonitorStore, RawWindow

log = logging.getLogger(__name__)

DEFAULT_WINDOW_MS = 60_000
DEFAULT_RETENTION_MS = 300_000
"""30 windows of the monitor's default 10 s (``scheduler.monitor.retention.windows``)."""
DRIVER_MAX_ROWS = 50_000
"""Inputs of at most this many rows (records, executor and traffic rows of the topologies due)
are aggregated on the driver (:mod:`.aggregate_local`), larger ones by Spark. A topology of
100 executors gives ~4,000 rows (30 retained windows), one of 1,000 executors ~100,000
(docs/monitoring.md, "Monitoring cost")."""
ENGINES = ("auto", "spark", "driver")


@dataclass
class JobConfig:
    window_ms: int = DEFAULT_WINDOW_MS
    retention_ms: int = DEFAULT_RETENTION_MS
    parquet: Path | None = None
    period_ms: int = 0
    """the job's own period (``--every``); 0: one run"""
    max_period_ms: int = 0
    """the longest a topology whose counts are steady waits between aggregations
    (:mod:`.cadence`); at most ``period_ms``: every topology every run"""
    engine: str = "auto"
    """``auto``: on the driver up to :data:`DRIVER_MAX_ROWS` input rows without Parquet, else
    Spark; ``spark`` or ``driver``: always that one (``driver`` cannot write Parquet)"""
    driver_max_rows: int = DRIVER_MAX_ROWS
    spark_timeout_ms: int = 0
    """the longest Spark's part of a run may take before its jobs are cancelled and the run
    aggregates on the driver instead; 0: no limit"""

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.engine == "driver" and self.parquet is not None:
            raise ValueError("the Parquet history needs Spark: engine 'driver' cannot write it")

    def uses_spark(self, rows: int) -> bool:
        """Whether an aggregation of ``rows`` input rows runs on Spark."""
        if self.engine != "auto":
            return self.engine == "spark"
        return self.parquet is not None or rows > self.driver_max_rows


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
    """seconds per phase: ``zookeeper`` (listing and reading), ``parse``, ``spark`` or
    ``driver`` (the aggregation, by the engine that ran it), ``write``"""
    steady: dict[str, str] = field(default_factory=dict)
    """topologies with new windows left for a later run (their counts are steady), and when"""
    engine: str = ""
    """``spark`` or ``driver``: what aggregated this run's tables; empty when nothing was"""
    spark_failure: str = ""
    """why Spark did not aggregate a run meant for it (the driver did): empty when it did"""


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
        self.cadence = Cadence(config.period_ms, config.max_period_ms)
        self._warned: dict[str, set[str]] = {}
        """topology id -> the declared-edge warnings already logged (logged again only when
        the reason changes)"""

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
        steady: dict[str, str] = {}
        spark_failure = ""
        self.cadence.forget(topologies)
        if not skip:
            documents, reasons, steady, spark_failure = self._aggregate(
                raw, topologies, now, reset_reference, phases
            )
        engine = next((name for name in ("spark", "driver") if name in phases), "")
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
            steady=steady,
            engine=engine,
            spark_failure=spark_failure,
        )

    def _aggregate(
        self,
        raw: list[RawWindow],
        topologies: list[str],
        now: int,
        reset_reference: bool,
        phases: dict[str, float],
    ) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]], dict[str, str], str]:
        """The due topologies' documents, the corrupt records' reasons, the steady topologies
        and why Spark did not aggregate a run meant for it (empty when it did or was not
        meant to)."""
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
        current: dict[str, list[WindowRecord]] = defaultdict(list)
        for record in kept_in_window(parsed.records, now - window).values():
            current[record.topology_id].append(record)
        steady: dict[str, str] = {}
        due = []
        for topology_id in topologies:
            if reset_reference or self.cadence.due(topology_id, current[topology_id], now):
                due.append(topology_id)
            else:
                steady[topology_id] = self.cadence.waiting(topology_id, now)
        if not due:
            phases["parse"] = time.perf_counter() - mark
            return {}, dict(parsed.reasons), steady, ""
        wanted = set(due)
        records = [r for r in parsed.records if r.topology_id in wanted]
        flat = flatten(records, traffic_after_ms=now - window)
        traffic = estimate_topologies(records, now - window)
        for topology_id, estimated in traffic.items():
            flat.traffic.extend(estimated.rows)
            self._warn_declared(topology_id, estimated.estimate.warnings(topology_id))
        phases["parse"] = time.perf_counter() - mark
        mark = time.perf_counter()
        tables: Tables | None = None
        spark_failure = ""
        if flat.records and self.config.uses_spark(input_rows(flat)):
            tables, spark_failure = self._on_spark(flat, now - window, now)
        on_spark = tables is not None
        if tables is None:
            tables = aggregate_local(flat, now - window) if flat.records else Tables()
        phases["spark" if on_spark else "driver"] = time.perf_counter() - mark
        mark = time.perf_counter()
        documents = build_documents(
            tables,
            due,
            now,
            window,
            parsed.corrupt,
            {t: estimated.document_fields() for t, estimated in traffic.items()},
        )
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
            self.cadence.aggregated(topology_id, current[topology_id], now)
        phases["write"] = time.perf_counter() - mark
        return documents, dict(parsed.reasons), steady, spark_failure

    def _on_spark(self, flat: FlatRecords, cut_ms: int, now: int) -> tuple[Tables | None, str]:
        """The run's tables by Spark (and its Parquet rows), and why Spark failed (empty when
        it did not). The tables are ``None``, with a warning, when Spark failed or ran past
        ``spark_timeout_ms`` before they were collected: the caller then aggregates on the
        driver. Tables collected before a failed Parquet write are kept (that run's rows are
        missing from the history, with a warning)."""
        seconds = self.config.spark_timeout_ms / 1000
        deadline: SparkDeadline | None = None
        tables: Tables | None = None
        failure = ""
        tag = f"scheduler-py-run-{self._runs}"
        try:
            with bounded_jobs(self.spark, seconds, tag) as deadline:
                result = aggregate_frames(frames_from_rows(self.spark, flat, cut_ms))
                tables = collect(result)
                if self.config.parquet is not None:
                    write_parquet(result, self.config.parquet, now)
        except Exception as error:
            failure = _spark_failure(error, deadline)
            if tables is None:
                log.warning(
                    "%s; this run aggregated on the driver instead%s, and Spark is tried again "
                    "next run",
                    failure,
                    ", appending nothing to the Parquet history" if self.config.parquet else "",
                )
            else:
                log.warning(
                    "%s while appending to the Parquet history in %s: the aggregates were "
                    "written, this run's rows are missing from the history",
                    failure,
                    self.config.parquet,
                )
        return tables, failure

    def _warn_declared(self, topology_id: str, lines: list[str]) -> None:
        """One WARNING per edge priced as declared; again only when its reason changes."""
        warned = self._warned.setdefault(topology_id, set())
        for line in lines:
            if line not in warned:
                log.warning("%s", line)
        warned.intersection_update(lines)
        warned.update(lines)


def _spark_failure(error: Exception, deadline: SparkDeadline | None) -> str:
    """One line on why Spark's part of a run did not finish."""
    if deadline is not None and deadline.passed.is_set():
        return (
            f"Spark did not finish within {deadline.seconds:g} s (its jobs were cancelled; "
            "is a Spark worker with free cores registered at the master?)"
        )
    first = (str(error).strip().splitlines() or [""])[0][:300]
    return f"Spark failed ({type(error).__name__}: {first})"
