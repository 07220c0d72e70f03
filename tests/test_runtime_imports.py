"""The brain's runtime imports only its core dependencies (pyproject.toml): Spark, plotting,
streamparse, Flask and benchmark tooling are extras, imported only by the commands that
need them."""

from __future__ import annotations

import json
import subprocess
import sys

EXTRAS = ("pyspark", "matplotlib", "streamparse", "flask", "waitress", "tqdm", "plotly")

PROBE = """
import json, sys
import scheduler_py.cli as cli
parser = cli.build_parser()
parser.parse_args(["serve", "--zookeeper", "127.0.0.1:2181", "--nimbus", "127.0.0.1:6627"])
import scheduler_py.cli.operator, scheduler_py.cli.metrics
import scheduler_py.service.server, scheduler_py.service.client
import scheduler_py.scheduling.round, scheduler_py.scheduling.documents
import scheduler_py.scheduling.proposal
import scheduler_py.reconfig.controller
import scheduler_py.monitoring.measured, scheduler_py.monitoring.links
import scheduler_py.nimbus
from scheduler_py.algorithms.registry import algorithms
algorithms()
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def test_serving_plan_and_operator_commands_import_no_extra():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout.strip().splitlines()[-1]))
    assert not loaded & set(EXTRAS), f"runtime imported extras: {sorted(loaded & set(EXTRAS))}"
    assert "scheduler_py" in loaded
