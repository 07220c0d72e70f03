"""``scheduler-py aggregate``: run the PySpark aggregation once or every N seconds.

::

    scheduler-py aggregate --once                        # local[1] Spark, addresses from storm.yaml
    scheduler-py aggregate --every 30s --window 60s --zookeeper zk1:2181 --nimbus nimbus:6627
    scheduler-py aggregate --once --master spark://spark-master:7077 --parquet /data/monitoring
    scheduler-py aggregate --once --reset-reference      # the next aggregate is the new reference

ZooKeeper and Nimbus: the flags, else ``$SCHEDULER_PY_ZOOKEEPER``/``$SCHEDULER_PY_NIMBUS``, else
Storm's ``storm.yaml`` (``--storm-conf``, :mod:`scheduler_py.cli.cluster_options`), else
127.0.0.1:2181 and 127.0.0.1:6627.

Exit status (:mod:`scheduler_py.cli.exit_codes`): 0 done, 2 usage error, 69 ZooKeeper or the
Spark master unreachable, 78 an unusable storm.yaml or ZooKeeper credential. In ``--every``
mode a failed run is logged and the next one tried; SIGTERM/SIGINT stop the loop after the
current run.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from scheduler_py.cli import exit_codes
from scheduler_py.cli.cluster_options import (
    DEFAULT_NIMBUS,
    DEFAULT_ZOOKEEPER,
    add_monitor_root_argument,
    add_storm_conf_arguments,
    add_zookeeper_argument,
    duration_ms,
    nimbus_text,
    resolve,
)
from scheduler_py.cli.logging_setup import add_log_level_argument, configure_logging
from scheduler_py.config import ConfigValueError, parse_key_values

log = logging.getLogger(__name__)

STRETCH_FACTOR = 4
MAX_STRETCH_MS = 120_000
"""A steady topology's aggregate is at most this old (plus a run) when the brain reads it:
within ``scheduler.brain.metrics.max.age.secs``' default of 180 s (monitoring/measured.py)."""


def max_period_ms(args: argparse.Namespace) -> int:
    """The stretch of a steady topology's period (``monitoring/cadence.py``); 0: none."""
    if not args.every or args.no_stretch:
        return 0
    if args.max_period is not None:
        return args.max_period
    return min(STRETCH_FACTOR * args.every, MAX_STRETCH_MS)


SPARK_TIMEOUT_MIN_MS = 60_000
SPARK_TIMEOUT_MAX_MS = 300_000


def spark_timeout_ms(args: argparse.Namespace) -> int:
    """How long Spark's part of a run may take (``monitoring/job.py``): ``--spark-timeout``,
    else with ``--every`` twice the period within 60 s..5 min, so that a hung Spark job delays
    the brain's aggregates by at most that long; once: no limit."""
    if args.spark_timeout is not None:
        return args.spark_timeout
    if not args.every:
        return 0
    return min(max(2 * args.every, SPARK_TIMEOUT_MIN_MS), SPARK_TIMEOUT_MAX_MS)


parse_duration = duration_ms()
"""``500ms``, ``30s``, ``5m``, ``1h`` or a bare number of seconds → milliseconds
(:mod:`scheduler_py.config.durations`, the syntax of every duration flag)."""


def _key_value(text: str) -> tuple[str, str]:
    try:
        ((key, value),) = parse_key_values([text], "--spark-conf").items()
    except ConfigValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return key, value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``scheduler-py aggregate`` (shared with :func:`main`)."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="aggregate once and exit (default)")
    mode.add_argument(
        "--every",
        type=parse_duration,
        metavar="DURATION",
        help="aggregate every DURATION (e.g. 30s)",
    )
    parser.add_argument(
        "--max-runs", type=int, default=0, help="with --every: stop after this many runs (0: never)"
    )
    parser.add_argument(
        "--master",
        default="local[1]",
        help="Spark master (default local[1]: one core; local[*], or any spark:// URL)",
    )
    parser.add_argument(
        "--spark-timeout",
        type=parse_duration,
        metavar="DURATION",
        help="cancel Spark's jobs of a run that takes longer and aggregate that run on the "
        "driver, appending nothing to --parquet (default with --every: twice the period, "
        f"{SPARK_TIMEOUT_MIN_MS // 1000} s to {SPARK_TIMEOUT_MAX_MS // 60_000} min; once: "
        "no limit)",
    )
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        type=_key_value,
        metavar="KEY=VALUE",
        help="extra Spark setting, repeatable (e.g. spark.driver.memory=2g)",
    )
    add_zookeeper_argument(parser)
    parser.add_argument(
        "--zookeeper-timeout",
        type=parse_duration,
        default=15_000,
        metavar="DURATION",
        help="give up connecting to ZooKeeper, or waiting for one of its answers, after this "
        "long (default 15s)",
    )
    add_monitor_root_argument(parser)
    parser.add_argument(
        "--window",
        type=parse_duration,
        default=60_000,
        metavar="DURATION",
        help="sliding window of the aggregate (default 60s)",
    )
    parser.add_argument(
        "--retention",
        type=parse_duration,
        default=300_000,
        metavar="DURATION",
        help="delete window znodes older than this (default 5m = 30 windows of 10 s)",
    )
    parser.add_argument(
        "--nimbus",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="Nimbus to ask which topologies run, the leader of several (default "
        "$SCHEDULER_PY_NIMBUS, else storm.yaml's nimbus.seeds and nimbus.thrift.port, else "
        f"{DEFAULT_NIMBUS}); the monitoring znodes of the others are deleted",
    )
    parser.add_argument(
        "--no-cleanup",
        action="store_true",
        help="do not ask Nimbus; aggregate every monitored topology and delete none",
    )
    parser.add_argument(
        "--parquet", type=Path, metavar="DIR", help="also append the tables to a Parquet dataset"
    )
    parser.add_argument(
        "--reset-reference",
        action="store_true",
        help="make this (first) aggregate the change-signal reference of every topology",
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=10,
        help="run at this niceness, 0..19 (default 10); the Spark JVM inherits it",
    )
    parser.add_argument(
        "--cpu-weight",
        type=int,
        default=20,
        metavar="WEIGHT",
        help="cgroup CPU weight 1..10000, 100 = an ordinary process (default 20); 0: no cgroup",
    )
    parser.add_argument(
        "--cpu-quota",
        type=float,
        metavar="CORES",
        help="hard CPU cap in cores through the cgroup (e.g. 0.5; default: none)",
    )
    parser.add_argument(
        "--max-period",
        type=parse_duration,
        metavar="DURATION",
        help="with --every: the longest a topology whose counts are steady waits between "
        f"aggregations (default {STRETCH_FACTOR}x --every, at most "
        f"{MAX_STRETCH_MS // 1000} s); it is aggregated at once when its counts move",
    )
    parser.add_argument(
        "--no-stretch",
        action="store_true",
        help="with --every: aggregate every topology on every run, steady or not",
    )
    parser.add_argument("--json", action="store_true", help="print the aggregates as JSON")
    add_storm_conf_arguments(parser)
    add_log_level_argument(parser)
    parser.add_argument("--log-file", help="log here instead of stderr")


def running_topologies(nimbus: tuple[tuple[str, int], ...]) -> set[str] | None:
    """Topology ids the (leader) Nimbus lists, or ``None`` (with a warning) when it does not
    answer."""
    from scheduler_py.nimbus import NimbusCtl

    try:
        summary = NimbusCtl.of(nimbus, timeout_ms=5000).cluster_summary()
    except Exception as error:
        log.warning(
            "Nimbus %s did not answer (%s): no topology cleanup this run",
            nimbus_text(nimbus),
            error,
        )
        return None
    return {t["id"] for t in summary["topologies"]}


def _report(summary: Any, root: str, as_json: bool) -> None:
    """Print what one run did (``summary``: a ``monitoring.job.RunSummary``)."""
    if as_json:
        print(json.dumps(summary.documents, indent=2, sort_keys=True), flush=True)
    for document in summary.documents.values():
        print(_summary_line(root, document), flush=True)
    for topology_id, why in sorted(summary.steady.items()):
        print(f"{topology_id}: {why}", flush=True)
    if summary.skipped:
        done = (
            f"no new window znode since the last run ({summary.read_windows} read before): "
            "aggregates left as they are"
        )
    elif not summary.documents and summary.steady:
        done = (
            f"{summary.new_windows} new window znode(s), every topology steady: no Spark work, "
            "aggregates left as they are"
        )
    else:
        done = (
            f"aggregated {summary.read_windows} window znode(s) ({summary.new_windows} new) of "
            f"{len(summary.documents)} topolog(ies) in {summary.seconds:.1f} s "
            f"({_phases(summary.phases)})"
        )
    if summary.spark_failure:
        done = f"{done}; on the driver: {summary.spark_failure}"
    deleted = f"deleted {summary.deleted_windows} old window(s)"
    if summary.deleted_topologies:
        deleted += f" and the znodes of {', '.join(summary.deleted_topologies)}"
    print(f"{done}; {deleted}", flush=True)


def _phases(phases: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds:.2f} s" for name, seconds in phases.items())


def _summary_line(root: str, document: dict[str, Any]) -> str:
    change = document["change"]["l1_relative"]
    change_text = "n/a" if change is None else f"{change:.3f}"
    missing = ", ".join(f"{m['host']}:{m['port']}" for m in document["missing"]) or "none"
    return (
        f"{document['topology_id']}: {document['records']} record(s) in {document['windows']} "
        f"window(s) ({document['corrupt_records']} corrupt, {document['duplicate_records']} "
        f"duplicate), {len(document['executors'])} executors, {len(document['pairs'])} pairs, "
        f"{len(document['edges'])} edges, missing {missing}, change "
        f"{change_text} -> {root}/aggregate/{document['topology_id']}"
    )


def run(args: argparse.Namespace) -> int:
    """Run ``scheduler-py aggregate`` with parsed ``args``."""
    configure_logging(args.log_level, args.log_file)
    from kazoo.exceptions import KazooException
    from kazoo.handlers.threading import KazooTimeoutError

    from scheduler_py.monitoring.job import AggregationJob, JobConfig
    from scheduler_py.monitoring.masters import unreachable_master
    from scheduler_py.monitoring.spark import spark_session
    from scheduler_py.monitoring.zk import MonitorStore, connect
    from scheduler_py.monitoring.zk_acl import CredentialError

    if args.retention < args.window:
        print("scheduler-py aggregate: --retention must be >= --window", file=sys.stderr)
        return exit_codes.USAGE
    from scheduler_py.monitoring import priority

    try:
        wanted = priority.Priority(args.nice, args.cpu_weight or None, args.cpu_quota)
    except ValueError as error:
        print(f"scheduler-py aggregate: {error}", file=sys.stderr)
        return exit_codes.USAGE
    addresses = resolve(args)
    zookeeper = addresses.zookeeper or DEFAULT_ZOOKEEPER
    problem = unreachable_master(args.master)
    if problem:
        print(f"scheduler-py aggregate: {problem}", file=sys.stderr)
        return exit_codes.UNAVAILABLE
    try:
        client = connect(zookeeper, timeout=args.zookeeper_timeout / 1000.0)
    except KazooTimeoutError:
        print(
            f"scheduler-py aggregate: ZooKeeper {zookeeper} unreachable; pass --zookeeper "
            "HOST:PORT or --storm-conf (storm.yaml's storm.zookeeper.servers)",
            file=sys.stderr,
        )
        return exit_codes.UNAVAILABLE
    except CredentialError as error:
        print(f"scheduler-py aggregate: {error}", file=sys.stderr)
        return exit_codes.CONFIG
    stop = threading.Event()
    previous = {}
    if args.every and threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, lambda *_: stop.set())
    try:
        store = MonitorStore(client, addresses.monitor_root, args.zookeeper_timeout / 1000.0)
        applied = priority.apply(wanted)  # before the Spark JVM starts: it inherits both
        if applied:
            log.info("aggregation runs at a lower CPU priority: %s", "; ".join(applied))
        spark = spark_session(args.master, dict(args.spark_conf))
        job = AggregationJob(
            spark,
            store,
            JobConfig(
                window_ms=args.window,
                retention_ms=args.retention,
                parquet=args.parquet,
                period_ms=args.every or 0,
                max_period_ms=max_period_ms(args),
                spark_timeout_ms=spark_timeout_ms(args),
            ),
        )
        nimbus = None
        if not args.no_cleanup:
            nimbus = addresses.nimbus or resolve_default_nimbus()
        runs = 0
        reset = args.reset_reference
        while True:
            started = time.monotonic()
            try:
                running = running_topologies(nimbus) if nimbus else None
                summary = job.run_once(running=running, reset_reference=reset)
                reset = False
            except KazooException as error:
                # an expected fault (ZooKeeper restarting, a session expiring): one line, the
                # next run reads everything again; nothing aggregated before is lost
                if not args.every:
                    print(f"scheduler-py aggregate: ZooKeeper failed: {error!r}", file=sys.stderr)
                    return exit_codes.UNAVAILABLE
                log.warning(
                    "aggregation run skipped: ZooKeeper %s failed (%s); trying again in %d ms",
                    zookeeper,
                    type(error).__name__,
                    args.every,
                )
            except Exception:
                if not args.every:
                    raise
                log.exception("aggregation run failed; trying again in %d ms", args.every)
            else:
                _report(summary, store.root, args.json)
            runs += 1
            if not args.every or (args.max_runs and runs >= args.max_runs):
                return 0
            if stop.wait(max(0.0, args.every / 1000.0 - (time.monotonic() - started))):
                return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        client.stop()
        client.close()


def resolve_default_nimbus() -> tuple[tuple[str, int], ...]:
    from scheduler_py.nimbus import parse_addresses

    return parse_addresses(DEFAULT_NIMBUS, 6627)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scheduler-py aggregate",
        description="Aggregate the worker monitors' window records (PySpark) into ZooKeeper.",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
