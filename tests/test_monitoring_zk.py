"""The ZooKeeper side with a real ZooKeeper (started here from the Storm home's jars) and
a real local Spark: the store, cleanup, the aggregation job and CLI end to end, and the
brain reading aggregates back."""

from __future__ import annotations

import time
import uuid

import pytest

from scheduler_py import cli as top_cli
from scheduler_py.devtools.zkserver import free_port
from scheduler_py.monitoring.job import AggregationJob, JobConfig
from scheduler_py.monitoring.measured import ZooKeeperAggregates
from scheduler_py.monitoring.records import (
    ExecutorSample,
    TrafficSample,
    WindowRecord,
    decode,
    encode,
)
from scheduler_py.monitoring.spark import spark_session
from scheduler_py.monitoring.zk import MonitorStore, connect
from scheduler_py.scheduling.round import RoundConfig
from tests.snapshots import answer, snapshot, supervisor, wordcount


@pytest.fixture
def store(zookeeper):
    """A store under a root of its own, so tests do not see each other's znodes."""
    client = connect(zookeeper.hosts)
    yield MonitorStore(client, f"/test-{uuid.uuid4().hex[:8]}")
    client.stop()
    client.close()


@pytest.fixture(scope="module")
def spark():
    return spark_session("local[2]")


def window(topology, sup, port, end, executors, traffic=(), seq=0):
    return WindowRecord(
        topology_id=topology,
        supervisor_id=sup,
        host=f"127.0.0.{port % 10 + 1}",
        port=port,
        seq=seq,
        window_start_ms=end - 10_000,
        window_end_ms=end,
        worker_cpu_ms=500.0,
        overhead_cpu_ms=50.0,
        executors=tuple(ExecutorSample(s, e, c, float(t), float(p)) for s, e, c, t, p in executors),
        traffic=tuple(TrafficSample(s, d, "default", float(n), float(b)) for s, d, n, b in traffic),
    )


def publish_wordcount(store, topology, now, windows=6, scale=1.0, workers=("sup-a", "sup-b")):
    """Word count as snapshots.wordcount numbers it, on two workers, ``windows`` windows up to
    ``now``: spouts 10-11 → splits 7-9 → counts 4-6, ackers 1-3."""
    for k in range(windows):
        end = now - k * 10_000
        store.publish_window(
            window(
                topology,
                workers[0],
                6700,
                end,
                [
                    (10, 10, "spout", 100 * scale, 0),
                    (11, 11, "spout", 100, 0),
                    (7, 7, "split", 10, 290),
                    (1, 1, "__acker", 5, 0),
                ],
                [
                    (10, 7, 100 * scale, 5000),
                    (10, 8, 100, 5000),
                    (11, 9, 100, 5000),
                    (7, 4, 300, 9000),
                ],
                seq=100 - k,
            )
        )
        store.publish_window(
            window(
                topology,
                workers[1],
                6710,
                end,
                [
                    (8, 8, "split", 10, 290),
                    (9, 9, "split", 10, 290),
                    (4, 4, "count", 5, 95),
                    (5, 5, "count", 5, 95),
                    (6, 6, "count", 5, 95),
                    (2, 2, "__acker", 5, 0),
                    (3, 3, "__acker", 5, 0),
                ],
                [(8, 5, 300, 9000), (9, 6, 300, 9000)],
                seq=100 - k,
            )
        )


def test_store_round_trip_and_layout(store):
    record = window("topo-1", "sup-a", 6700, 1_000_000, [(1, 1, "spout", 1, 0)])
    path = store.publish_window(record)
    assert path == f"{store.root}/monitor/topo-1/sup-a:6700/w-1000000"
    (raw,) = store.load_windows("topo-1")
    assert (raw.worker, raw.name, raw.path_end_ms) == ("sup-a:6700", "w-1000000", 1_000_000)
    assert decode(raw.data)["executors"][0]["component"] == "spout"
    assert store.topologies() == ["topo-1"]
    store.write_aggregate("topo-2", {"v": 1, "x": 1})
    store.write_reference("topo-3", {"v": 1, "cpu": {}, "pairs": {}})
    assert store.read_aggregate("topo-2") == {"v": 1, "x": 1}
    assert store.read_aggregate("nope") is None
    assert store.known_topologies() == {"topo-1", "topo-2", "topo-3"}
    store.client.set(store.aggregate_path("topo-2"), b"not gzip")
    assert store.read_aggregate("topo-2") is None


def test_cleanup_of_dead_topologies_and_old_windows(store):
    now = 5_000_000
    for end in (now - 400_000, now - 100_000, now):
        store.publish_window(window("live", "sup-a", 6700, end, [(1, 1, "s", 1, 0)]))
    store.publish_window(window("live", "sup-gone", 6720, now - 400_000, [(1, 1, "s", 1, 0)]))
    store.client.create(f"{store.monitor_path('live', 'sup-a:6700')}/not-a-window", b"x")
    store.publish_window(window("dead", "sup-a", 6700, now, [(1, 1, "s", 1, 0)]))
    store.write_aggregate("dead", {"v": 1})
    store.delete_topology("dead")
    assert store.known_topologies() == {"live"}
    windows = store.load_windows("live")
    assert len(windows) == 5
    # the unparsable name falls back to its mtime (now, in real time): kept
    deleted = store.delete_old_windows(windows, cutoff_ms=now - 300_000)
    assert deleted == 2
    left = sorted(w.name for w in store.load_windows("live"))
    assert left == ["not-a-window", f"w-{now - 100_000}", f"w-{now}"]
    # the gone worker's znode was emptied long ago (by ctime, i.e. real time) ... only
    # when its ctime is older than the cutoff; here it was created just now: kept
    assert store.client.exists(store.monitor_path("live", "sup-gone:6720"))
    store.delete_old_windows([], cutoff_ms=now - 300_000, topologies=["live"])
    assert store.client.exists(store.monitor_path("live", "sup-gone:6720"))
    later = int(time.time() * 1000) + 60_000
    store.delete_old_windows(store.load_windows("live"), cutoff_ms=later)
    assert store.topologies() == ["live"]
    assert store.client.get_children(store.monitor_path("live")) == []


def test_job_end_to_end(store, spark, tmp_path):
    now = 10_000_000
    publish_wordcount(store, "wc-1", now)
    store.publish_window(window("wc-1", "sup-c", 6720, now - 120_000, [(12, 12, "x", 1, 0)]))
    store.publish_window(
        window("wc-1", "sup-a", 6700, now - 5, [(1, 1, "s", 1, 0)]), data=b"\x1f\x8bbroken"
    )
    publish_wordcount(store, "dead-1", now, windows=1)
    job = AggregationJob(
        spark, store, JobConfig(window_ms=60_000, retention_ms=100_000, parquet=tmp_path / "pq")
    )
    summary = job.run_once(now_ms=now, running={"wc-1"})
    assert summary.deleted_topologies == ["dead-1"]
    assert summary.deleted_windows == 1  # sup-c's window is past the retention
    assert store.known_topologies() == {"wc-1"}
    doc = store.read_aggregate("wc-1")
    assert doc == summary.documents["wc-1"]
    assert doc["records"] == 12 and doc["windows"] == 6
    assert doc["corrupt_records"] == 1
    assert doc["missing"] == [
        {"supervisor_id": "sup-c", "host": "127.0.0.1", "port": 6720, "last_seen_ms": now - 120_000}
    ]
    edges = {(e["from"], e["to"]): e["tuples_per_s"] for e in doc["edges"]}
    assert edges == {
        ("spout", "split"): pytest.approx(30.0),
        ("split", "count"): pytest.approx(90.0),
    }
    cpu = {e["task_start"]: e["cpu_percent"] for e in doc["executors"]}
    assert cpu[7] == pytest.approx(3.0) and cpu[4] == pytest.approx(1.0)
    assert doc["change"] == {"l1_relative": 0.0, "reference_computed_at_ms": now}
    assert store.read_reference("wc-1")["computed_at_ms"] == now
    for table in ("executors", "pairs", "components", "edges", "workers"):
        assert list((tmp_path / "pq" / table).glob("topology_id=wc-1/*.parquet")), table

    # the spouts speed up: the change signal moves, the reference stays
    later = now + 60_000
    publish_wordcount(store, "wc-1", later, scale=3.0)
    doc = job.run_once(now_ms=later, running={"wc-1"}).documents["wc-1"]
    assert doc["change"]["reference_computed_at_ms"] == now
    assert doc["change"]["l1_relative"] > 0.1
    assert store.read_reference("wc-1")["computed_at_ms"] == now
    doc = job.run_once(now_ms=later, running={"wc-1"}, reset_reference=True).documents["wc-1"]
    assert doc["change"] == {"l1_relative": 0.0, "reference_computed_at_ms": later}

    # nothing new: no Spark work, nothing rewritten; one new window: only it is read
    quiet = job.run_once(now_ms=later + 1_000, running={"wc-1"})
    assert quiet.skipped and quiet.new_windows == 0 and quiet.documents == {}
    assert store.read_aggregate("wc-1")["computed_at_ms"] == later
    store.publish_window(window("wc-1", "sup-a", 6700, later + 10_000, [(1, 1, "s", 1, 0)]))
    fresh = job.run_once(now_ms=later + 10_000, running={"wc-1"})
    assert not fresh.skipped and fresh.new_windows == 1
    assert fresh.read_windows == quiet.read_windows - quiet.deleted_windows + 1
    assert store.read_aggregate("wc-1")["computed_at_ms"] == later + 10_000


def test_a_spark_run_past_its_deadline_is_cancelled_and_aggregated_on_the_driver(
    store, spark, tmp_path
):
    """A 1 ms deadline cancels the run's Spark jobs: the aggregate is still written, equal to
    the driver's, nothing goes to the Parquet history, and the summary says why; the next run
    with time enough is Spark's again."""
    now = 10_000_000
    publish_wordcount(store, "wc-1", now)
    hurried = AggregationJob(
        spark,
        store,
        JobConfig(window_ms=60_000, parquet=tmp_path / "pq", spark_timeout_ms=1),
    )
    summary = hurried.run_once(now_ms=now, running={"wc-1"})
    assert summary.engine == "driver", summary
    assert "did not finish within 0.001 s" in summary.spark_failure
    assert not list((tmp_path / "pq").rglob("*.parquet"))
    on_driver = store.read_aggregate("wc-1")
    expected = AggregationJob(spark, store, JobConfig(window_ms=60_000, engine="driver"))
    reference = expected.run_once(now_ms=now, running={"wc-1"}).documents["wc-1"]
    for part in ("executors", "edges", "pairs", "components", "workers"):
        assert on_driver[part] == reference[part], part

    patient = AggregationJob(
        spark,
        store,
        JobConfig(window_ms=60_000, parquet=tmp_path / "pq", spark_timeout_ms=600_000),
    )
    again = patient.run_once(now_ms=now, running={"wc-1"})
    assert again.engine == "spark" and again.spark_failure == ""
    assert list((tmp_path / "pq" / "executors").glob("topology_id=wc-1/*.parquet"))


def test_cli_every_with_parquet_and_the_brain_reading_back(
    zookeeper, store, spark, tmp_path, capsys
):
    now = int(time.time() * 1000)
    publish_wordcount(store, "wc-1", now)
    code = top_cli.main(
        [
            "aggregate",
            "--every",
            "1s",
            "--max-runs",
            "2",
            "--zookeeper",
            zookeeper.hosts,
            "--root",
            store.root,
            "--no-cleanup",
            "--window",
            "10m",  # the machine may be slow: every published window stays in
            "--retention",
            "20m",
            "--parquet",
            str(tmp_path / "pq"),
            "--nice",  # this is the test process: keep its priority and cgroup
            "0",
            "--cpu-weight",
            "0",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("wc-1: 12 record(s) in 6 window(s) (0 corrupt, 0 duplicate)") == 1
    assert "aggregated 12 window znode(s) (12 new) of 1 topolog(ies)" in out
    # nothing new arrived for the second run: no Spark work, the aggregate is left as it is
    assert "no new window znode since the last run (12 read before)" in out
    assert f"-> {store.root}/aggregate/wc-1" in out

    source = ZooKeeperAggregates(zookeeper.hosts, store.root, cache_secs=3600)
    try:
        deadline = time.monotonic() + 30
        while source.aggregate("wc-1") is None and time.monotonic() < deadline:
            time.sleep(0.2)  # the client connects in the background
        assert source.aggregate("wc-1")["records"] == 12
        supervisors = [supervisor("sup-a", (6700, 6701)), supervisor("sup-b", (6710, 6711))]
        reply, _ = answer(snapshot(supervisors, [wordcount()]), RoundConfig("td", costs=source))
        assert "costs: measured (6 windows, 60 s, bytes/s, exact pairs)" in reply.plans[0].reason
        # cached for cache_secs, then re-read
        store.write_aggregate("wc-1", {"v": 1, "records": -1})
        assert source.aggregate("wc-1")["records"] == 12
        source.cache_secs = 0.0
        assert source.aggregate("wc-1")["records"] == -1
    finally:
        source.close()


def test_brain_source_without_zookeeper_answers_none_at_once():
    source = ZooKeeperAggregates(f"127.0.0.1:{free_port()}", cache_secs=0.0)
    try:
        started = time.monotonic()
        assert source.aggregate("wc-1") is None
        assert source.aggregate("wc-1") is None
        assert time.monotonic() - started < 2.0
        # the plan's reason says why the costs are declared
        supervisors = [supervisor("sup-a", (6700, 6701)), supervisor("sup-b", (6710, 6711))]
        reply, _ = answer(snapshot(supervisors, [wordcount()]), RoundConfig("td", costs=source))
        assert f"costs: declared (not connected to ZooKeeper {source.hosts})" in (
            reply.plans[0].reason
        )
    finally:
        source.close()


def test_cli_reports_unreachable_zookeeper(capsys):
    code = top_cli.main(
        [
            "aggregate",
            "--once",
            "--zookeeper",
            f"127.0.0.1:{free_port()}",
            "--zookeeper-timeout",
            "2s",
            "--no-cleanup",
            "--nice",
            "0",
            "--cpu-weight",
            "0",
        ]
    )
    assert code == 69  # an unreachable service (scheduler_py/cli/exit_codes.py)
    assert "unreachable" in capsys.readouterr().err


def test_encode_is_deterministic():
    assert encode({"b": 1, "a": 2}) == encode({"a": 2, "b": 1})


def test_connect_opens_the_connection_before_the_first_read(zookeeper, store):
    """The service calls ``connect`` at start: the first round after a cluster starts then
    reads measured costs instead of answering "not connected" (it did in ``make demo``)."""
    store.write_aggregate("wc-1", {"v": 1, "records": 7})
    source = ZooKeeperAggregates(zookeeper.hosts, store.root, cache_secs=0.0)
    try:
        source.connect()
        client = source._client
        assert client is not None, "connect() did not start a client"
        deadline = time.monotonic() + 30
        while not client.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.connected, f"no connection to {zookeeper.hosts} within 30 s of connect()"
        assert source.aggregate("wc-1") == {"v": 1, "records": 7}  # the first read
    finally:
        source.close()
