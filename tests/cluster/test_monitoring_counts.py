"""The worker monitor's counts mode (the default: ``CountsReporter``, no task hook) on the
real local cluster: the version-2 window records each worker publishes into ZooKeeper carry
Storm's per-task counts for every task Nimbus placed there, the topology's routes and no
per-pair traffic; their counts agree with each other across components; and the live counters
(counts mode: the executors' queues read exactly) show a deactivated multilang topology
drain. Contract: ``docs/monitoring-format.md`` §1.1, §1.2, §5. The aggregation of these
records is tested with the rest of the pipeline in ``test_monitoring.py``.
"""

from __future__ import annotations

import gzip
import json
import math
import time
from collections import defaultdict

import pytest

from scheduler_py.monitoring.live import read_live
from scheduler_py.monitoring.zk import MonitorStore, connect
from scheduler_py.reconfig.drain import check_drain
from tests.cluster import aggregation
from tests.cluster.aggregation import ROOT
from tests.cluster.operations import LIVE_COUNTERS
from tests.cluster.waiting import wait_until

pytestmark = pytest.mark.cluster

NAME = "wc-counts"
SAMPLE_RATE = 0.05
"""``topology.stats.sample.rate``, Storm's default: 1 tuple in 20 counted, as 20"""
ROUTES = {
    ("sentences", "default", "split", "shuffle", ()),
    ("split", "default", "count", "fields", ("word",)),
}


@pytest.fixture(scope="module")
def counted(cluster):
    client = connect(aggregation.zookeeper(cluster))
    try:
        topology_id = cluster.submit(
            NAME,
            "scheduler.brain.algorithm=even",
            "scheduler.reconfig.replan.on.measured=false",
            *LIVE_COUNTERS,
            "scheduler.monitor.zk.root=" + ROOT,
            wait_acked=20,
        )
        yield cluster, client, MonitorStore(client, ROOT), topology_id
    finally:
        client.stop()
        client.close()
        cluster.kill(NAME)


def _records(store, topology_id) -> list[dict]:
    return [json.loads(gzip.decompress(w.data)) for w in store.load_windows(topology_id)]


def _common_windows(records: list[dict]) -> list[dict]:
    """The records of the windows every worker covered: the workers publish one record per
    window, but at a given moment one may have published a window more than another, and the
    spouts' and the splitters' sums compared over different spans differ by a window's tuples."""
    spans = defaultdict(list)
    for r in records:
        spans[(r["host"], r["port"])].append((r["window_start_ms"], r["window_end_ms"]))
    first = max(min(start for start, _ in s) for s in spans.values())
    last = min(max(end for _, end in s) for s in spans.values())
    return [r for r in records if first <= (r["window_start_ms"] + r["window_end_ms"]) / 2 <= last]


def test_records_carry_storms_counts_for_every_placed_task(counted):
    cluster, _client, store, topology_id = counted
    runs = cluster.nimbus.executor_runs(NAME)
    workers = {(r.host, r.port) for r in runs}

    def four_each():
        per = defaultdict(int)
        for r in _records(store, topology_id):
            per[(r["host"], r["port"])] += 1
        return all(per[w] >= 4 for w in workers) and per

    wait_until(four_each, 180, "4 windows from every worker", lambda: _records(store, topology_id))
    full = [r for r in _records(store, topology_id) if r["seq"] >= 1]  # the first is partial
    assert full
    records = _common_windows(full)
    assert records, "no window that every worker's records cover"
    emitted = executed = 0
    for r in records:
        assert r["v"] == 2 and r["mode"] == "counts", r
        assert r["traffic"] == [] and "tuple_bytes" not in r
        assert r["sample_rate"] == pytest.approx(SAMPLE_RATE)
        assert r["reset_counters"] == 0
        here = {
            t
            for run in runs
            if (run.host, run.port) == (r["host"], r["port"])
            for t in range(run.task_start, run.task_end + 1)
        }
        counts = {c["task"]: c for c in r["task_counts"]}
        assert here <= set(counts), (sorted(here), sorted(counts))
        assert -1 in counts and counts[-1]["component"] == "__system"
        components = {c["component"] for c in r["task_counts"]}
        assert {
            (x["component"], x["stream"], x["target"], x["grouping"], tuple(x.get("fields", ())))
            for x in r["routes"]
        } == {route for route in ROUTES if route[0] in components}
        for c in r["task_counts"]:
            if c["component"] == "sentences":
                emitted += c["emitted"].get("default", 0)
            if c["component"] == "split":
                executed += c["executed"].get("sentences:default", 0)
    # Storm's sampled estimates (1 in 20, each sample counting 20): what the spouts emitted,
    # the splitters executed. An estimate of N tuples is 20 × a Poisson count of N / 20
    # samples, so its standard deviation is about sqrt(20 N); the two estimates agree within
    # four deviations of their difference. (A fixed ±25 % failed a run at 1,440 executed
    # against 1,120 emitted, 1.4 deviations apart.)
    assert emitted > 200
    weight = 1 / SAMPLE_RATE
    deviation = math.sqrt(weight * (emitted + executed))
    assert abs(executed - emitted) <= 4 * deviation, (emitted, executed, deviation)


def test_live_counters_see_a_deactivated_topology_drain(counted):
    cluster, client, _store, topology_id = counted
    live = wait_until(lambda: read_live(client, topology_id), 60, "live counters")
    assert all(any(t.executed > 0 for t in w.tasks) for w in live.values()), live
    cluster.nimbus.deactivate(NAME)
    try:
        started = time.monotonic()
        state = {"previous": None, "quiet": 0, "detail": ""}

        def drained():
            current = read_live(client, topology_id)
            check = check_drain(state["previous"], current, expected=sorted(live))
            state["previous"], state["detail"] = current, check.detail
            state["quiet"] = state["quiet"] + 1 if check.drained else 0
            return state["quiet"] >= 2

        wait_until(drained, 60, "the topology to drain", lambda: state["detail"])
        assert time.monotonic() - started < 60
        quiet = state["previous"]
        assert sum(w.pending for w in quiet.values()) == 0
    finally:
        cluster.nimbus.activate(NAME)
