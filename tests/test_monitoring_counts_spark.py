"""Counts-mode records through the Spark side of the aggregation (a real local Spark, no
ZooKeeper): the estimated pairs of ``monitoring/traffic_source.py`` come out of the Spark job
at the estimated rates, beside exact traffic, with the aggregate's counts-mode fields."""

from __future__ import annotations

import pytest

from scheduler_py.monitoring.aggregate import aggregate_rows
from scheduler_py.monitoring.documents import build_documents
from scheduler_py.monitoring.pair_estimate import estimate_pairs
from scheduler_py.monitoring.records import flatten
from scheduler_py.monitoring.spark import spark_session
from scheduler_py.monitoring.synthetic_counts import SHAPES, Layout, simulate
from scheduler_py.monitoring.traffic_source import estimate_topologies, kept_in_window

NOW = 1_800_000_000_000
WINDOW = 60_000


@pytest.fixture(scope="module")
def documents():
    counted = simulate(
        SHAPES["wordcount"], Layout(3, 1), NOW, windows=8, mode="counts", topology_id="wc-counts"
    )
    exact = simulate(SHAPES["star"], Layout(3, 2), NOW, mode="exact", topology_id="star-exact")
    records = counted.records + exact.records
    records += counted.records[:3]  # re-published windows: duplicates the job drops
    flat = flatten(records, traffic_after_ms=NOW - WINDOW)
    traffic = estimate_topologies(records, NOW - WINDOW)
    for estimated in traffic.values():
        flat.traffic.extend(estimated.rows)
    tables = aggregate_rows(spark_session("local[2]"), flat, NOW, WINDOW)
    fields = {t: e.document_fields() for t, e in traffic.items()}
    docs = build_documents(tables, ["wc-counts", "star-exact"], NOW, WINDOW, {}, fields)
    return docs, counted, exact, records


def pairs_of(document):
    return {(p["src"][0], p["dst"][0]): p["tuples_per_s"] for p in document["pairs"]}


def test_estimated_pairs_come_out_of_spark_at_their_rates(documents):
    docs, counted, _, records = documents
    in_window = [
        r for r in kept_in_window(records, NOW - WINDOW).values() if r.topology_id == "wc-counts"
    ]
    expected = estimate_pairs(in_window).tuples_per_s
    got = pairs_of(docs["wc-counts"])
    assert got.keys() == expected.keys()
    for pair, rate in expected.items():
        assert got[pair] == pytest.approx(rate, rel=1e-3, abs=1e-3)
    truth = counted.truth
    error = sum(abs(got.get(k, 0) - truth.get(k, 0)) for k in got.keys() | truth.keys())
    assert error / sum(truth.values()) < 0.03


def test_counts_mode_fields(documents):
    docs, *_ = documents
    wc = docs["wc-counts"]
    assert wc["traffic_source"] == "estimated" and wc["monitor_modes"] == ["counts"]
    assert wc["declared_edges"] == [] and wc["sample_rate"] == 0.05
    assert wc["components"]["split"]["execute_ms"] == pytest.approx(0.05)
    assert wc["duplicate_records"] == 3


def test_exact_traffic_is_kept_as_it_is(documents):
    docs, _, exact, _ = documents
    star = docs["star-exact"]
    assert star["traffic_source"] == "exact"
    got = pairs_of(star)
    assert got.keys() == exact.truth.keys()
    for pair, rate in exact.truth.items():
        assert got[pair] == pytest.approx(rate, rel=1e-3)
