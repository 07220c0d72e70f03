"""Start one Storm daemon of a local cluster again the way ``deploy/cluster-up.sh`` starts
it (``start()`` there): ``$STORM_HOME/bin/storm <daemon>`` in ``$CLUSTER_DIR`` with
``STORM_CONF_DIR=$CLUSTER_DIR/conf/<conf>`` and ``STORM_LOG_DIR=$CLUSTER_DIR/logs``, output
appended to ``logs/<name>.out``, in its own session (process group), its pid in
``run/<name>.pid`` so ``deploy/cluster-down.sh`` stops it with the rest. Used by the
benchmarks (``scheduler_py/bench/cluster.py`` restarts Nimbus with another scheduler) and
the cluster tests (a supervisor started again)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path


def start_daemon(
    cluster_dir: Path,
    cluster_env: Mapping[str, str],
    daemon: str,
    name: str,
    extra_env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``storm <daemon>`` as component ``name`` (``nimbus``, ``supervisor-2``…) with
    the settings of ``cluster_env`` (``run/cluster.env``: ``STORM_HOME`` at least) and
    ``extra_env``; returns the process (its pid is written to ``run/<name>.pid``)."""
    logs = cluster_dir / "logs"
    env = dict(cluster_env)
    env.update(STORM_LOG_DIR=str(logs), STORM_CONF_DIR=str(cluster_dir / "conf" / name))
    env.update(extra_env or {})
    with (logs / f"{name}.out").open("ab") as out:
        process = subprocess.Popen(
            [str(Path(cluster_env["STORM_HOME"]) / "bin" / "storm"), daemon],
            cwd=cluster_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    (cluster_dir / "run" / f"{name}.pid").write_text(f"{process.pid}\n")
    return process
