"""Start one Storm daemon of a local cluster again the way ``deploy/cluster-up.sh`` starts
it (``start()`` there): ``$STORM_HOME/bin/storm <daemon> [args]`` in ``$CLUSTER_DIR`` with
``STORM_CONF_DIR=$CLUSTER_DIR/conf/<conf>`` and ``STORM_LOG_DIR=$CLUSTER_DIR/logs``, output
appended to ``logs/<name>.out``, in its own session (process group), its pid in
``run/<name>.pid`` so ``deploy/cluster-down.sh`` stops it with the rest. Used by the
benchmarks (``scheduler_py/bench/cluster.py`` restarts Nimbus with another scheduler) and
the cluster tests (a supervisor, Nimbus or ZooKeeper started again)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def start_daemon(
    cluster_dir: Path,
    cluster_env: Mapping[str, str],
    daemon: str,
    name: str,
    extra_env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    conf: str | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``storm <daemon> <args>`` as component ``name`` (``nimbus``, ``supervisor-2``…)
    with the settings of ``cluster_env`` (``run/cluster.env``: ``STORM_HOME`` at least) and
    ``extra_env``, its configuration in ``conf/<conf>`` (default ``conf/<name>``); returns
    the process (its pid is written to ``run/<name>.pid``)."""
    logs = cluster_dir / "logs"
    env = dict(cluster_env)
    env.update(STORM_LOG_DIR=str(logs), STORM_CONF_DIR=str(cluster_dir / "conf" / (conf or name)))
    env.update(extra_env or {})
    with (logs / f"{name}.out").open("ab") as out:
        process = subprocess.Popen(
            [str(Path(cluster_env["STORM_HOME"]) / "bin" / "storm"), daemon, *args],
            cwd=cluster_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    (cluster_dir / "run" / f"{name}.pid").write_text(f"{process.pid}\n")
    return process


def start_zookeeper(cluster_dir: Path, cluster_env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """Start the cluster's ZooKeeper again as ``deploy/cluster-up.sh`` does: ``storm zookeeper
    conf/zookeeper/zoo.cfg`` with Nimbus's configuration directory (same data directory)."""
    zoo_cfg = cluster_dir / "conf" / "zookeeper" / "zoo.cfg"
    return start_daemon(
        cluster_dir, cluster_env, "zookeeper", "zookeeper", args=[str(zoo_cfg)], conf="nimbus"
    )
