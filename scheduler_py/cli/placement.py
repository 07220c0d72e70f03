"""``scheduler-py placement TOPOLOGY``: where every executor runs, per Nimbus, next to
where the brain planned it (the table: ``scheduler_py/nimbus/placement_table.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from scheduler_py.nimbus import NimbusCtl, parse_hostport
from scheduler_py.nimbus.placement_table import render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scheduler-py placement")
    parser.add_argument("topology", help="topology name")
    parser.add_argument("--nimbus", default="127.0.0.1:6627", help="HOST:PORT of Nimbus")
    parser.add_argument(
        "--plan-log", default="build/cluster/logs/brain-plans.jsonl", help="the brain's plan log"
    )
    args = parser.parse_args(argv)
    host, port = parse_hostport(args.nimbus)
    text, _ = render(NimbusCtl(host, port), args.topology, Path(args.plan_log))
    print(text)
    return 0
