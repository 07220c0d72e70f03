"""``scheduler-py metrics TOPOLOGY``: the latest aggregate of a running topology as tables.

ZooKeeper and Nimbus as every command finds them (:mod:`scheduler_py.cli.cluster_options`:
flags, ``$SCHEDULER_PY_*``, storm.yaml). Exit status (:mod:`scheduler_py.cli.exit_codes`): 0
shown, 1 no aggregate yet, 2 usage or no such topology, 69 ZooKeeper or Nimbus unreachable.
"""

from __future__ import annotations

import argparse
import sys
import time

from kazoo.handlers.threading import KazooTimeoutError

from scheduler_py.cli import exit_codes
from scheduler_py.cli.cluster_options import (
    DEFAULT_NIMBUS,
    DEFAULT_ZOOKEEPER,
    add_monitor_root_argument,
    add_nimbus_argument,
    add_storm_conf_arguments,
    add_zookeeper_argument,
    duration_seconds,
    resolve,
)
from scheduler_py.monitoring.show import render
from scheduler_py.monitoring.zk import MonitorStore, connect
from scheduler_py.nimbus import NimbusCtl, parse_addresses


def build_parser() -> argparse.ArgumentParser:
    """The options of ``scheduler-py metrics``."""
    parser = argparse.ArgumentParser(prog="scheduler-py metrics")
    parser.add_argument("topology", help="topology name or id")
    add_nimbus_argument(parser)
    add_zookeeper_argument(parser)
    add_monitor_root_argument(parser)
    add_storm_conf_arguments(parser)
    parser.add_argument(
        "--wait",
        type=duration_seconds(allow_zero=True),
        default=0.0,
        metavar="DURATION",
        help="wait up to this long for an aggregate (e.g. 2m; a bare number is seconds)",
    )
    parser.add_argument(
        "--min-windows",
        type=int,
        default=1,
        help="with --wait: wait for an aggregate covering at least this many windows",
    )
    parser.add_argument(
        "--computed-after-ms",
        type=int,
        default=0,
        help="with --wait: wait for an aggregate computed at or after this epoch time (ms)",
    )
    parser.add_argument(
        "--window-after-ms",
        type=int,
        default=0,
        help="with --wait: wait for an aggregate whose window starts at or after this epoch "
        "time (ms), i.e. measured only after it",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    addresses = resolve(args)
    nimbus = addresses.nimbus or parse_addresses(DEFAULT_NIMBUS, 6627)
    zookeeper = addresses.zookeeper or DEFAULT_ZOOKEEPER
    topology_id = NimbusCtl.of(nimbus).find_topology_id(args.topology)
    if topology_id is None:
        print(f"scheduler-py metrics: no running topology {args.topology!r}", file=sys.stderr)
        return exit_codes.USAGE
    try:
        client = connect(zookeeper)
    except KazooTimeoutError:
        print(
            f"scheduler-py metrics: cannot reach ZooKeeper at {zookeeper} (no connection "
            "within 10 s); pass --zookeeper HOST:PORT or --storm-conf (storm.yaml's "
            "storm.zookeeper.servers)",
            file=sys.stderr,
        )
        return exit_codes.UNAVAILABLE
    root = addresses.monitor_root
    try:
        store = MonitorStore(client, root)
        deadline = time.monotonic() + args.wait
        document = store.read_aggregate(topology_id)
        while time.monotonic() < deadline and not _wanted(document, args):
            time.sleep(2)
            document = store.read_aggregate(topology_id)
    finally:
        client.stop()
        client.close()
    if document is None:
        print(
            f"scheduler-py metrics: no aggregate for {topology_id} under {root}/aggregate; "
            f"is the worker monitor enabled (deploy/monitor.yaml) and `scheduler-py aggregate` "
            f"running?",
            file=sys.stderr,
        )
        return exit_codes.FAILED
    if not _wanted(document, args):
        print(
            f"NOTE: this aggregate is not the one waited for ({_shortfall(document, args)}): "
            "the aggregation is behind — is `scheduler-py aggregate` running, is the machine "
            "overloaded (uptime)?",
        )
    print(render(document, int(time.time() * 1000)))
    return 0


def _wanted(document: dict | None, args: argparse.Namespace) -> bool:
    return document is not None and not _shortfall(document, args)


def _shortfall(document: dict, args: argparse.Namespace) -> str:
    """What ``document`` lacks of what the options ask for ("" when nothing)."""
    missing = []
    if document.get("windows", 0) < args.min_windows:
        missing.append(f"{document.get('windows', 0)} of {args.min_windows} windows")
    computed = int(document.get("computed_at_ms") or 0)
    if computed < args.computed_after_ms:
        missing.append(f"computed {(args.computed_after_ms - computed) / 1000:.0f} s too early")
    start = int(document.get("window_start_ms") or 0)
    if start < args.window_after_ms:
        missing.append(f"its window starts {(args.window_after_ms - start) / 1000:.0f} s too early")
    return ", ".join(missing)
