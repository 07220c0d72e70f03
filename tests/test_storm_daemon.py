"""``scheduler_py/devtools/storm_daemon.py`` starts a daemon as deploy/cluster-up.sh does:
conf and log dirs, output file, pid file, own session. A stand-in ``bin/storm`` script
records what it was given."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from scheduler_py.devtools.storm_daemon import start_daemon, start_zookeeper


def test_start_daemon_like_cluster_up(tmp_path: Path) -> None:
    storm_home, cluster = tmp_path / "storm-home", tmp_path / "cluster"
    (storm_home / "bin").mkdir(parents=True)
    (cluster / "logs").mkdir(parents=True)
    (cluster / "run").mkdir()
    launcher = storm_home / "bin" / "storm"
    launcher.write_text('#!/bin/sh\necho "$1 $STORM_CONF_DIR $STORM_LOG_DIR $EXTRA $(pwd)"\n')
    launcher.chmod(launcher.stat().st_mode | stat.S_IEXEC)
    process = start_daemon(
        cluster, {"STORM_HOME": str(storm_home), "PATH": os.environ["PATH"]}, "nimbus",
        "nimbus", {"EXTRA": "x"},
    )  # fmt: skip
    assert process.wait(timeout=30) == 0
    assert (cluster / "run" / "nimbus.pid").read_text().strip() == str(process.pid)
    line = (cluster / "logs" / "nimbus.out").read_text().split()
    assert line == ["nimbus", str(cluster / "conf" / "nimbus"), str(cluster / "logs"), "x",
                    str(cluster)]  # fmt: skip


def test_start_zookeeper_like_cluster_up(tmp_path: Path) -> None:
    """``storm zookeeper conf/zookeeper/zoo.cfg`` with Nimbus's conf dir, as cluster-up.sh."""
    storm_home, cluster = tmp_path / "storm-home", tmp_path / "cluster"
    (storm_home / "bin").mkdir(parents=True)
    (cluster / "logs").mkdir(parents=True)
    (cluster / "run").mkdir()
    launcher = storm_home / "bin" / "storm"
    launcher.write_text('#!/bin/sh\necho "$1 $2 $STORM_CONF_DIR"\n')
    launcher.chmod(launcher.stat().st_mode | stat.S_IEXEC)
    process = start_zookeeper(cluster, {"STORM_HOME": str(storm_home), "PATH": os.environ["PATH"]})
    assert process.wait(timeout=30) == 0
    assert (cluster / "run" / "zookeeper.pid").read_text().strip() == str(process.pid)
    line = (cluster / "logs" / "zookeeper.out").read_text().split()
    assert line == ["zookeeper", str(cluster / "conf" / "zookeeper" / "zoo.cfg"),
                    str(cluster / "conf" / "nimbus")]  # fmt: skip
