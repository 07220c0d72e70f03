"""``scheduler-py aggregate`` as the real-cluster tests run it (the cluster fixture starts
none: ``AGGREGATE=no`` in tests/cluster/conftest.py): one argument list for a single run
(``--once``, e.g. in-process through ``scheduler_py.cli.main``) or a periodic one
(``--every``), and the periodic one as a process of its own (:func:`start_periodic`,
:func:`stop`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

SCHEDULER_PY = str(Path(sys.executable).with_name("scheduler-py"))
ROOT = "/scheduler-py"
"""the monitoring root (``scheduler.monitor.zk.root``) the tests' topologies publish under"""


def zookeeper(cluster) -> str:
    """``host:port`` of the cluster's ZooKeeper."""
    return f"{cluster.env['STORM_ZK_HOST']}:{cluster.env['STORM_ZK_PORT']}"


def aggregate_args(
    cluster,
    every: str | None = None,
    window: str = "20s",
    master: str = "local[1]",
    log_file: Path | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The arguments of ``scheduler-py aggregate`` (without the program): ``--every
    every`` when given, else ``--once``; ``extra`` last."""
    args = ["aggregate", *(("--every", every) if every else ("--once",))]
    args += ["--window", window, "--master", master, "--zookeeper", zookeeper(cluster)]
    args += ["--root", ROOT, "--nimbus", cluster.env["STORM_NIMBUS"]]
    if log_file is not None:
        args += ["--log-file", str(log_file)]
    return [*args, *extra]


def start_periodic(cluster, name: str, every: str = "5s", window: str = "20s") -> subprocess.Popen:
    """``scheduler-py aggregate --every`` in a session of its own (its Spark JVM in the same
    process group), logging to ``logs/aggregate-<name>.log`` with each run's summary (how
    long its Spark phases took) in ``logs/aggregate-<name>.out``."""
    logs = cluster.directory / "logs"
    with (logs / f"aggregate-{name}.out").open("ab") as summaries:
        return subprocess.Popen(
            [
                SCHEDULER_PY,
                *aggregate_args(cluster, every, window, log_file=logs / f"aggregate-{name}.log"),
            ],
            stdout=summaries,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(process: subprocess.Popen, how: signal.Signals = signal.SIGTERM) -> None:
    """Send ``how`` to the aggregation's process group and wait until it has exited
    (SIGKILL after 60 s)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, how)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    # the group's other members (the Spark JVM) go with it: wait until none is left
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
