"""The real brain (``BrainHandler`` with the default round configuration) made slow on
demand: while the flag file exists, the round's cost lookup (where a slow ZooKeeper would
hold it up) sleeps ``--delay`` seconds per topology, longer than the shim's
``scheduler.brain.timeout.ms``, so the shim gives up on the round and falls back. Removing
the flag makes it answer at once again. Run as a script:

    python -m tests.cluster.slow_brain --port 9627 --flag FILE --delay 8 --plan-log FILE
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler, make_brain_server
from tests.cluster.brain_key import cluster_shim_auth


class SlowCosts:
    """Declared costs (a :class:`~scheduler_py.scheduling.interfaces.CostSource`), after
    ``delay`` seconds while ``flag`` exists."""

    def __init__(self, flag: Path, delay: float) -> None:
        self.flag = flag
        self.delay = delay

    def costs_for(
        self, topology: Any, storm_executor: Mapping[str, Any], conf: Mapping[str, Any]
    ) -> tuple[Any, str]:
        if self.flag.exists():
            time.sleep(self.delay)
        return topology, "declared (the slow test brain measures nothing)"

    def aggregate(self, topology_id: str) -> Mapping[str, Any] | None:
        return None

    def close(self) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--flag", type=Path, required=True)
    parser.add_argument("--delay", type=float, required=True, help="seconds")
    parser.add_argument("--plan-log", type=Path)
    parser.add_argument("--cluster-dir", help="unused; marks the process as this cluster's")
    args = parser.parse_args()
    brain = BrainHandler(RoundConfig(costs=SlowCosts(args.flag, args.delay)), args.plan_log)
    make_brain_server(brain, "127.0.0.1", args.port, shim_auth=cluster_shim_auth()).serve()


if __name__ == "__main__":
    main()
