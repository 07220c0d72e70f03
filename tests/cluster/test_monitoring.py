"""Runtime monitoring on the real local cluster: the Java worker monitor publishes window
records into the cluster's ZooKeeper, ``scheduler-py aggregate`` (PySpark) aggregates
them, and the brain (restarted with ``--zookeeper``) plans with the measured costs.

The monitor is enabled per topology at submit (``topology.metrics.reporters`` and the
multilang log handler, as ``deploy/monitor.yaml`` does cluster-wide), in exact mode
(``scheduler.monitor.mode=exact``: the per-tuple ``TrafficHook`` too), with 5 s windows; it
needs ``storm-scheduler-plugin.jar`` in ``$STORM_HOME/extlib/`` (deploy/install-storm.sh).
Contract: ``docs/monitoring-format.md``.
"""

from __future__ import annotations

import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from scheduler_py import cli as top_cli
from scheduler_py.monitoring.records import parse_window
from scheduler_py.monitoring.zk import MonitorStore, connect
from tests.cluster import aggregation
from tests.cluster.aggregation import ROOT
from tests.cluster.operations import (
    LIVE_COUNTERS,
    MONITOR_WINDOW_SECS,
    kill_supervisor,
    plans_since,
    start_supervisor,
    supervisor_index,
)
from tests.cluster.waiting import wait_until as _wait

pytestmark = pytest.mark.cluster

NAME = "wc-monitor"
WINDOW_SECS = MONITOR_WINDOW_SECS
SLIDING_S = 30
SLIDING = f"{SLIDING_S}s"
MONITOR_OPTIONS = (
    *LIVE_COUNTERS,
    # exact mode (the per-tuple hooks): the pair traffic and tuple sizes checked below are
    # exact; counts mode's records are checked in test_monitoring_counts.py
    "scheduler.monitor.mode=exact",
    "scheduler.monitor.zk.root=" + ROOT,
)
USER_EDGES = {("sentences", "split"), ("split", "count")}
ACK_EDGES = {
    ("sentences", "__acker"),  # __ack_init
    ("split", "__acker"),  # __ack_ack
    ("count", "__acker"),  # __ack_ack
    ("__acker", "sentences"),  # tuple tree complete
}


def _aggregate(cluster, capsys) -> dict:
    code = top_cli.main(
        aggregation.aggregate_args(
            cluster,
            window=SLIDING,
            master="local[2]",
            # in-process: keep the test process's (and its children's) priority
            extra=("--nice", "0", "--cpu-weight", "0"),
        )
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{ROOT}/aggregate/" in out, out
    return out


def _monitor_in_jar(cluster) -> bool:
    jar = Path(cluster.env["STORM_HOME"]) / "extlib" / "storm-scheduler-plugin.jar"
    if not jar.exists():
        return False
    with zipfile.ZipFile(jar) as archive:
        return "io/schedulerpy/storm/monitor/TrafficHook.class" in archive.namelist()


def _brain_with_zookeeper(cluster) -> None:
    cluster.start_brain(
        str(Path(sys.executable).with_name("scheduler-py")),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(cluster.brain_port),
        "--log-file",
        str(cluster.directory / "logs" / "brain.log"),
        "--plan-log",
        str(cluster.plan_log),
        "--zookeeper",
        aggregation.zookeeper(cluster),
        "--monitor-root",
        ROOT,
    )


@pytest.fixture(scope="module")
def monitored(cluster):
    """Word count with the worker monitor on, spread over the 3 supervisors by ``even``,
    and the brain reading aggregates from the cluster's ZooKeeper."""
    assert _monitor_in_jar(cluster), (
        "the worker monitor (io.schedulerpy.storm.monitor.TrafficHook) is not in "
        "$STORM_HOME/extlib/storm-scheduler-plugin.jar: build storm_plugin and run "
        "deploy/install-storm.sh"
    )
    _brain_with_zookeeper(cluster)
    client = connect(aggregation.zookeeper(cluster))
    store = MonitorStore(client, ROOT)
    try:
        topology_id = cluster.submit(
            NAME,
            "scheduler.brain.algorithm=even",
            # Nimbus may take minutes to notice a killed supervisor on a loaded machine: the
            # aggregate the test computes must still count as fresh when the brain re-plans
            "scheduler.brain.metrics.max.age.secs=900",
            # the placement by `even` is what the test checks: no re-plan on measurements
            "scheduler.reconfig.replan.on.measured=false",
            *MONITOR_OPTIONS,
            wait_acked=20,
        )
        yield cluster, store, topology_id
    finally:
        client.stop()
        client.close()
        cluster.kill(NAME)
        cluster.start_brain()


def _workers_with_windows(store, topology_id, at_least: int) -> Counter:
    per_worker = Counter(w.worker for w in store.load_windows(topology_id))
    return Counter({k: n for k, n in per_worker.items() if n >= at_least})


def test_windows_aggregate_to_the_topology_graph(monitored, capsys):
    cluster, store, topology_id = monitored
    runs = cluster.nimbus.executor_runs(NAME)
    workers = {(r.host, r.port) for r in runs}
    assert len(workers) == 3
    # every worker publishes a window every 5 s; wait for a full sliding window
    _wait(
        lambda: len(_workers_with_windows(store, topology_id, 7)) == 3,
        180,
        "7 windows from each of the 3 workers",
        lambda: str(Counter(w.worker for w in store.load_windows(topology_id))),
    )
    _aggregate(cluster, capsys)
    doc = store.read_aggregate(topology_id)
    assert doc is not None and doc["topology_id"] == topology_id
    assert doc["corrupt_records"] == 0, doc
    assert doc["missing"] == []
    assert doc["windows"] >= 5 and doc["records"] >= 15

    # executors: exactly Nimbus's (plus each worker's __system), where Nimbus runs them
    measured = {(e["task_start"], e["task_end"]): e for e in doc["executors"]}
    user = {(e.task_start, e.task_end): e for e in runs}
    assert set(user) <= set(measured)
    assert {measured[k]["component"] for k in set(measured) - set(user)} <= {"__system"}
    for key, run in user.items():
        assert measured[key]["component"] == run.component
        assert (measured[key]["host"], measured[key]["port"]) == (run.host, run.port)

    # the measured traffic graph is the topology's graph, acker edges included
    edges = {(e["from"], e["to"]): e for e in doc["edges"]}
    assert set(edges) == USER_EDGES | ACK_EDGES, sorted(edges)
    for pair in doc["pairs"]:
        assert tuple(pair["src"]) in measured and tuple(pair["dst"]) in measured, pair

    def rate(edge):
        return edges[edge]["tuples_per_s"]

    assert rate(("sentences", "split")) > 1.0
    # emitted by the spouts ≈ received (and acked) by the splitters; words likewise
    assert rate(("split", "__acker")) == pytest.approx(rate(("sentences", "split")), rel=0.25)
    assert rate(("sentences", "__acker")) == pytest.approx(rate(("sentences", "split")), rel=0.25)
    assert rate(("count", "__acker")) == pytest.approx(rate(("split", "count")), rel=0.25)
    assert rate(("split", "count")) > 2 * rate(("sentences", "split"))  # several words each
    assert edges[("split", "count")]["bytes_per_s"] > 0

    # CPU: busy executors > 0; the Python subprocess CPU lands on streamparse components
    by_component: dict[str, list[dict]] = {}
    for e in doc["executors"]:
        by_component.setdefault(e["component"], []).append(e)
    for component in ("sentences", "split", "count", "__acker"):
        assert max(e["cpu_percent"] for e in by_component[component]) > 0, component
    for component in ("sentences", "split", "count"):
        assert max(e["subprocess_cpu_percent"] for e in by_component[component]) > 0, component
    assert all(e["subprocess_cpu_percent"] == 0 for e in by_component["__acker"])
    assert doc["components"]["count"]["in_tuples_per_s"] == pytest.approx(
        rate(("split", "count")), rel=1e-3
    )
    # the first aggregate is the change-signal reference
    assert (
        store.read_reference(topology_id)["computed_at_ms"]
        == doc["change"]["reference_computed_at_ms"]
    )


def _victim_windows_left(store, topology_id, victim: str, ports: set[int], killed_ms: int) -> bool:
    """The newest window of the killed supervisor's workers (the latest one it could have
    published, one window after the kill, when ZooKeeper keeps none) ended more than the
    sliding window (plus a second) ago."""
    ends = []
    for raw in store.load_windows(topology_id):
        record = parse_window(raw.data)
        if record.host == victim and record.port in ports:
            ends.append(record.window_end_ms)
    newest = max(ends, default=killed_ms + WINDOW_SECS * 1000)
    return time.time() * 1000 > newest + SLIDING_S * 1000 + 1000


def test_killed_supervisor_is_missing_and_the_brain_replans_with_measured_costs(monitored, capsys):
    cluster, store, topology_id = monitored
    runs = cluster.nimbus.executor_runs(NAME)
    hosts = sorted({r.host for r in runs})
    assert len(hosts) >= 2
    victim = max(hosts, key=supervisor_index)
    index = supervisor_index(victim)
    victim_ports = {r.port for r in runs if r.host == victim}
    # a fresh aggregate for the brain to find when Nimbus re-plans the lost executors
    _aggregate(cluster, capsys)
    assert store.read_aggregate(topology_id)["missing"] == []
    killed_ms = int(time.time() * 1000)
    kill_supervisor(cluster, index)
    try:
        # the victim's last window leaves the 30 s sliding window
        _wait(
            lambda: _victim_windows_left(store, topology_id, victim, victim_ports, killed_ms),
            120,
            f"the newest window of {victim}'s workers (in ZooKeeper) to be more than the "
            f"{SLIDING} sliding window old",
        )
        out = _aggregate(cluster, capsys)
        doc = store.read_aggregate(topology_id)
        missing = {(m["host"], m["port"]) for m in doc["missing"]}
        assert {(victim, port) for port in victim_ports} <= missing, (doc["missing"], out)
        assert all(m["last_seen_ms"] <= killed_ms + WINDOW_SECS * 1000 for m in doc["missing"])
        assert doc["records"] > 0  # the other workers keep publishing
        assert all(e["host"] != victim for e in doc["executors"]), "no fresh CPU from the victim"

        # Nimbus notices (nimbus.supervisor.timeout.secs: 30) and the brain re-places the
        # lost executors, priced with the measured costs
        def replanned():
            return [
                e for e in plans_since(cluster, topology_id, killed_ms) if e["decision"] == "PLACE"
            ]

        entries = _wait(replanned, 240, "the brain to re-place the lost executors")
        assert "costs: measured (" in entries[-1]["reason"], entries[-1]["reason"]
    finally:
        start_supervisor(cluster, index)
        _wait(
            lambda: len(cluster.nimbus.cluster_summary()["supervisors"]) == 3,
            120,
            f"supervisor-{index} to register again",
        )
