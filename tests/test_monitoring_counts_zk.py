"""Counts mode through the real aggregation (a real ZooKeeper and a local Spark): pairs
estimated from Storm's counts, the aggregate's counts-mode fields, declared edges warned once,
the brain's note, and steady topologies aggregated less often."""

from __future__ import annotations

import logging
import uuid

import pytest

from scheduler_py.monitoring.job import AggregationJob, JobConfig
from scheduler_py.monitoring.records import Route, WindowRecord
from scheduler_py.monitoring.spark import spark_session
from scheduler_py.monitoring.synthetic_counts import SHAPES, Layout, simulate
from scheduler_py.monitoring.zk import MonitorStore, connect

NOW = 1_800_000_000_000


@pytest.fixture
def store(zookeeper):
    client = connect(zookeeper.hosts)
    yield MonitorStore(client, f"/test-{uuid.uuid4().hex[:8]}")
    client.stop()
    client.close()


@pytest.fixture(scope="module")
def spark():
    return spark_session("local[2]")


def publish(store, records):
    for record in records:
        store.publish_window(record)


def pair_error(document, truth):
    pairs = {(p["src"][0], p["dst"][0]): p["tuples_per_s"] for p in document["pairs"]}
    keys = pairs.keys() | truth.keys()
    return sum(abs(pairs.get(k, 0.0) - truth.get(k, 0.0)) for k in keys) / sum(truth.values())


def test_counts_mode_pairs_are_estimated_and_the_brain_says_so(store, spark):
    sim = simulate(SHAPES["wordcount"], Layout(3, 1), NOW, mode="counts", topology_id="wc-c")
    publish(store, sim.records)
    job = AggregationJob(spark, store, JobConfig(window_ms=60_000, retention_ms=300_000))
    document = job.run_once(now_ms=NOW, running={"wc-c"}).documents["wc-c"]
    assert document["traffic_source"] == "estimated"
    assert document["monitor_modes"] == ["counts"] and document["sample_rate"] == 0.05
    assert document["declared_edges"] == []
    assert pair_error(document, sim.truth) < 0.02
    assert document["components"]["count"]["execute_ms"] == pytest.approx(0.05)
    edges = {(e["from"], e["to"]) for e in document["edges"]}
    assert edges == {("sentences", "split"), ("split", "count")}


def test_exact_mode_records_keep_exact_pairs(store, spark):
    sim = simulate(SHAPES["linear"], Layout(2, 1), NOW, mode="exact", topology_id="lin-x")
    publish(store, sim.records)
    job = AggregationJob(spark, store, JobConfig())
    document = job.run_once(now_ms=NOW, running={"lin-x"}).documents["lin-x"]
    assert document["traffic_source"] == "exact"
    assert pair_error(document, sim.truth) < 1e-6


def _custom(record: WindowRecord) -> WindowRecord:
    routes = tuple(
        Route(r.component, r.stream, r.target, "custom") if r.component == "split" else r
        for r in record.routes
    )
    return WindowRecord(**{**record.__dict__, "routes": routes})


def test_a_custom_grouping_is_declared_warned_once_and_priced_as_declared(store, spark, caplog):
    caplog.set_level(logging.WARNING, logger="scheduler_py.monitoring.job")
    sim = simulate(SHAPES["wordcount"], Layout(3, 1), NOW, mode="counts", topology_id="wc-k")
    publish(store, [_custom(r) for r in sim.records])
    job = AggregationJob(spark, store, JobConfig())
    document = job.run_once(now_ms=NOW, running={"wc-k"}).documents["wc-k"]
    (edge,) = document["declared_edges"]
    assert (edge["from"], edge["to"], edge["grouping"]) == ("split", "count", "custom")
    assert edge["tuples_per_s"] == pytest.approx(
        sum(r for (s, d), r in sim.truth.items() if sim.component_of[s] == "split"), rel=0.02
    )
    assert {(e["from"], e["to"]) for e in document["edges"]} == {("sentences", "split")}
    later = simulate(
        SHAPES["wordcount"],
        Layout(3, 1),
        NOW + 10_000,
        windows=1,
        mode="counts",
        topology_id="wc-k",
        seed=7,
    )
    publish(store, [_custom(r) for r in later.records])
    job.run_once(now_ms=NOW + 10_000, running={"wc-k"})
    warnings = [r.getMessage() for r in caplog.records if "priced as declared" in r.getMessage()]
    assert len(warnings) == 1 and "split -[default, custom]-> count" in warnings[0]


def test_steady_topology_is_aggregated_less_often(store, spark):
    job = AggregationJob(spark, store, JobConfig(period_ms=10_000, max_period_ms=40_000))
    shape, layout = SHAPES["linear"], Layout(2, 1)
    publish(store, simulate(shape, layout, NOW, mode="counts", topology_id="lin-s").records)
    ran = []
    for step in range(9):
        now = NOW + step * 10_000
        if step:
            publish(
                store,
                simulate(
                    shape, layout, now, windows=1, mode="counts", topology_id="lin-s", seed=step + 1
                ).records,
            )
        summary = job.run_once(now_ms=now, running={"lin-s"})
        ran.append("lin-s" in summary.documents)
        assert ("lin-s" in summary.steady) != ran[-1]
    assert ran == [True, True, False, True, False, False, False, True, False]
    # the counts move: aggregated at once
    now = NOW + 9 * 10_000
    publish(
        store,
        simulate(
            shape, layout, now, windows=1, rate=4000.0, mode="counts", topology_id="lin-s", seed=50
        ).records,
    )
    summary = job.run_once(now_ms=now, running={"lin-s"})
    assert "lin-s" in summary.documents and not summary.steady
