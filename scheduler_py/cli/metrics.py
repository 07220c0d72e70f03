"""``scheduler-py metrics TOPOLOGY``: the latest aggregate of a running topology as tables."""

from __future__ import annotations

import argparse
import sys
import time

from kazoo.handlers.threading import KazooTimeoutError

from scheduler_py.monitoring.show import render
from scheduler_py.monitoring.zk import DEFAULT_ROOT, MonitorStore, connect
from scheduler_py.nimbus import NimbusCtl, parse_hostport


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scheduler-py metrics")
    parser.add_argument("topology", help="topology name or id")
    parser.add_argument("--nimbus", default="127.0.0.1:6627", help="HOST:PORT of Nimbus")
    parser.add_argument("--zookeeper", default="127.0.0.1:2181", help="HOST:PORT")
    parser.add_argument("--root", default=DEFAULT_ROOT, help="znode root of the monitoring")
    parser.add_argument(
        "--wait", type=float, default=0.0, help="wait up to this many seconds for an aggregate"
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
    args = parser.parse_args(argv)
    host, port = parse_hostport(args.nimbus)
    topology_id = NimbusCtl(host, port).find_topology_id(args.topology)
    if topology_id is None:
        print(f"scheduler-py metrics: no running topology {args.topology!r}", file=sys.stderr)
        return 2
    try:
        client = connect(args.zookeeper)
    except KazooTimeoutError:
        print(
            f"scheduler-py metrics: cannot reach ZooKeeper at {args.zookeeper} (no connection "
            "within 10 s); pass --zookeeper HOST:PORT (storm.yaml's storm.zookeeper.servers)",
            file=sys.stderr,
        )
        return 2
    try:
        store = MonitorStore(client, args.root)
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
            f"scheduler-py metrics: no aggregate for {topology_id} under {args.root}/aggregate; "
            f"is the worker monitor enabled (deploy/monitor.yaml) and `scheduler-py aggregate` "
            f"running?",
            file=sys.stderr,
        )
        return 1
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
