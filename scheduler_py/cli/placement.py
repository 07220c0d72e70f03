"""``scheduler-py placement TOPOLOGY``: where every executor runs, per Nimbus, next to
where the brain planned it (the table: ``scheduler_py/nimbus/placement_table.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from scheduler_py.cli.cluster_options import (
    DEFAULT_NIMBUS,
    add_nimbus_argument,
    add_storm_conf_arguments,
    resolve,
)
from scheduler_py.nimbus import NimbusCtl, parse_addresses
from scheduler_py.nimbus.placement_table import render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scheduler-py placement")
    parser.add_argument("topology", help="topology name")
    add_nimbus_argument(parser)
    add_storm_conf_arguments(parser)
    parser.add_argument(
        "--plan-log", default="build/cluster/logs/brain-plans.jsonl", help="the brain's plan log"
    )
    args = parser.parse_args(argv)
    nimbus = resolve(args).nimbus or parse_addresses(DEFAULT_NIMBUS, 6627)
    text, _ = render(NimbusCtl.of(nimbus), args.topology, Path(args.plan_log))
    print(text)
    return 0
