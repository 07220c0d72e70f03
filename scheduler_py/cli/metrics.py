"""``scheduler-py metrics TOPOLOGY``: the latest aggregate of a running topology as tables."""

from __future__ import annotations

import argparse
import sys
import time

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
    args = parser.parse_args(argv)
    host, port = parse_hostport(args.nimbus)
    topology_id = NimbusCtl(host, port).find_topology_id(args.topology)
    if topology_id is None:
        print(f"scheduler-py metrics: no running topology {args.topology!r}", file=sys.stderr)
        return 2
    client = connect(args.zookeeper)
    try:
        store = MonitorStore(client, args.root)
        deadline = time.monotonic() + args.wait
        document = store.read_aggregate(topology_id)
        while time.monotonic() < deadline and (
            document is None or document.get("windows", 0) < args.min_windows
        ):
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
    print(render(document, int(time.time() * 1000)))
    return 0
