"""The PySpark aggregation on hand-built window records, with a real local Spark.

Every scenario is its own topology, and all of them go through ONE aggregation (the job
aggregates all topologies together anyway), so Spark starts once and runs once for the
module. ``NOW`` = 1,000,000 ms and the sliding window is 60 s: a record counts iff its
``window_end_ms`` > 940,000.
"""

from __future__ import annotations

import gzip
import random

import pytest

from scheduler_py.monitoring.aggregate import aggregate_rows
from scheduler_py.monitoring.documents import build_documents, parse_windows
from scheduler_py.monitoring.records import (
    ExecutorSample,
    TrafficSample,
    WindowRecord,
    encode,
    flatten,
    record_document,
)
from scheduler_py.monitoring.spark import spark_session
from scheduler_py.monitoring.zk import RawWindow

NOW = 1_000_000
WINDOW = 60_000
IN_WINDOW = [950_000, 960_000, 970_000, 980_000, 990_000, 1_000_000]
OLD = [900_000, 930_000, 940_000]  # 940,000 is exactly on the edge: out


def record(topology, sup, port, end, executors, traffic=(), seq=0, duration=10_000, host=None):
    return WindowRecord(
        topology_id=topology,
        supervisor_id=sup,
        host=host or f"host-{sup}",
        port=port,
        seq=seq,
        window_start_ms=end - duration,
        window_end_ms=end,
        worker_cpu_ms=1000.0,
        overhead_cpu_ms=100.0,
        executors=tuple(ExecutorSample(s, e, c, float(t), float(p)) for s, e, c, t, p in executors),
        traffic=tuple(TrafficSample(s, d, st, float(n), float(b)) for s, d, st, n, b in traffic),
    )


def raw(rec: WindowRecord, data: bytes | None = None, worker: str | None = None) -> RawWindow:
    return RawWindow(
        rec.topology_id,
        worker or rec.worker,
        f"w-{rec.window_end_ms}",
        encode(record_document(rec)) if data is None else data,
        rec.window_end_ms,
    )


def basic(topology="t-basic"):
    """Worker A: spout [1,1], split [2,3], __system [-1,-1]; worker B: count [4,4], [5,5],
    __acker [6,6]. Old windows carry absurd numbers that must not count."""
    out = []
    for end in IN_WINDOW + OLD:
        old = end <= NOW - WINDOW
        k = 100 if old else 1
        out.append(
            record(
                topology,
                "sup-a",
                6700,
                end,
                [
                    (1, 1, "spout", 50 * k, 0),
                    (2, 3, "split", 20 * k, 180 * k),
                    (-1, -1, "__system", 1, 0),
                ],
                [
                    (1, 2, "default", 100 * k, 1000 * k),
                    (1, 3, "default", 50 * k, 500 * k),
                    (2, 4, "default", 200 * k, 2000 * k),
                    (3, 5, "default", 100 * k, 1000 * k),
                    (2, 6, "__ack_ack", 10 * k, 100 * k),
                ],
                seq=end // 10_000,
            )
        )
        out.append(
            record(
                topology,
                "sup-b",
                6710,
                end,
                [
                    (4, 4, "count", 10 * k, 90 * k),
                    (5, 5, "count", 30 * k, 270 * k),
                    (6, 6, "__acker", 5, 0),
                ],
                [(4, 6, "__ack_ack", 5 * k, 50 * k)],
                seq=end // 10_000,
            )
        )
    return out


def scenarios():
    windows: list[RawWindow] = []
    windows += [raw(r) for r in basic()]

    # t-missing: C published only before the window
    for end in IN_WINDOW:
        windows.append(raw(record("t-missing", "sup-a", 6700, end, [(1, 1, "spout", 10, 0)])))
    for end in OLD[:2]:
        windows.append(raw(record("t-missing", "sup-c", 6720, end, [(2, 2, "bolt", 10, 0)])))

    # t-dup: shuffled arrival, seq running backwards, one window published twice
    dup = []
    for i, end in enumerate(IN_WINDOW):
        dup.append(
            record(
                "t-dup",
                "sup-a",
                6700,
                end,
                [(1, 1, "spout", 100, 0)],
                [(1, 1, "x", 10, 0)],
                seq=50 - i,
            )
        )
    dup.append(
        record("t-dup", "sup-a", 6700, 980_000, [(1, 1, "spout", 999, 0)], seq=1)
    )  # older seq
    dup.append(
        record(
            "t-dup", "sup-a", 6700, 990_000, [(1, 1, "spout", 400, 0)], [(1, 1, "x", 40, 0)], seq=99
        )
    )
    random.Random(7).shuffle(dup)
    windows += [raw(r) for r in dup]

    # t-partial: B started 30 s ago; windows not aligned, 9.9 s long
    for end in IN_WINDOW:
        windows.append(
            raw(
                record(
                    "t-partial",
                    "sup-a",
                    6700,
                    end - 37,
                    [(1, 1, "spout", 99, 0)],
                    [(1, 2, "s", 99, 0)],
                    duration=9_900,
                )
            )
        )
    for end in IN_WINDOW[3:]:
        windows.append(
            raw(
                record(
                    "t-partial", "sup-b", 6710, end - 11, [(2, 2, "bolt", 0, 198)], duration=9_900
                )
            )
        )

    # t-unknown-dst: a destination task no record lists
    for end in IN_WINDOW:
        windows.append(
            raw(
                record(
                    "t-unknown-dst",
                    "sup-a",
                    6700,
                    end,
                    [(1, 1, "spout", 0, 0)],
                    [(1, 99, "d", 10, 0)],
                )
            )
        )

    # t-corrupt: two good records and five bad ones
    good = [
        record("t-corrupt", "sup-a", 6700, end, [(1, 1, "spout", 10, 0)]) for end in IN_WINDOW[:2]
    ]
    windows += [raw(r) for r in good]
    bad_doc = record_document(good[0])
    missing = dict(bad_doc)
    del missing["window_end_ms"]
    negative = dict(bad_doc, executors=[dict(bad_doc["executors"][0], thread_cpu_ms=-5)])
    windows += [
        raw(good[0], b"\x1f\x8b not really gzip"),
        raw(good[0], encode(bad_doc)[:-12]),  # truncated gzip
        raw(good[0], gzip.compress(b"{not json")),
        raw(good[0], encode(missing)),
        raw(good[0], encode(negative)),
        raw(good[1], worker="sup-z:6799"),  # published under another worker's znode
    ]

    # t-empty: nothing usable at all
    windows.append(RawWindow("t-empty", "sup-a:6700", "w-1", b"garbage", 0))
    return windows


@pytest.fixture(scope="module")
def documents():
    spark = spark_session("local[2]")
    windows = scenarios()
    parsed = parse_windows(windows)
    tables = aggregate_rows(spark, flatten(parsed.records), NOW, WINDOW)
    topologies = sorted({w.topology_id for w in windows})
    return build_documents(tables, topologies, NOW, WINDOW, parsed.corrupt)


def by_range(document):
    return {(e["task_start"], e["task_end"]): e for e in document["executors"]}


def pair_rates(document):
    return {(tuple(p["src"]), tuple(p["dst"])): p for p in document["pairs"]}


def test_window_edges_and_cpu(documents):
    doc = documents["t-basic"]
    assert doc["windows"] == 6
    assert doc["records"] == 12 and doc["records_retained"] == 18
    assert doc["window_start_ms"] == 940_000 and doc["window_end_ms"] == 1_000_000
    assert doc["computed_at_ms"] == NOW and doc["v"] == 1
    ex = by_range(doc)
    assert ex[(1, 1)]["cpu_percent"] == pytest.approx(0.5)
    assert ex[(2, 3)]["cpu_percent"] == pytest.approx(2.0)
    assert ex[(2, 3)]["subprocess_cpu_percent"] == pytest.approx(1.8)
    assert ex[(2, 3)]["thread_cpu_percent"] == pytest.approx(0.2)
    assert ex[(4, 4)]["cpu_percent"] == pytest.approx(1.0)
    assert ex[(5, 5)]["cpu_percent"] == pytest.approx(3.0)
    assert ex[(-1, -1)]["component"] == "__system"
    assert (ex[(4, 4)]["host"], ex[(4, 4)]["port"], ex[(4, 4)]["supervisor_id"]) == (
        "host-sup-b",
        6710,
        "sup-b",
    )
    assert ex[(1, 1)]["seconds"] == pytest.approx(60.0) and ex[(1, 1)]["windows"] == 6
    assert doc["missing"] == [] and doc["corrupt_records"] == 0 and doc["duplicate_records"] == 0
    workers = {(w["supervisor_id"], w["port"]): w for w in doc["workers"]}
    assert workers[("sup-a", 6700)]["cpu_percent"] == pytest.approx(10.0)
    assert workers[("sup-a", 6700)]["overhead_cpu_percent"] == pytest.approx(1.0)


def test_pairs_map_tasks_to_executors(documents):
    pairs = pair_rates(documents["t-basic"])
    assert set(pairs) == {
        ((1, 1), (2, 3)),
        ((2, 3), (4, 4)),
        ((2, 3), (5, 5)),
        ((2, 3), (6, 6)),
        ((4, 4), (6, 6)),
    }
    assert pairs[((1, 1), (2, 3))]["tuples_per_s"] == pytest.approx(15.0)  # tasks 2 and 3 merged
    assert pairs[((1, 1), (2, 3))]["bytes_per_s"] == pytest.approx(150.0)
    assert pairs[((2, 3), (4, 4))]["tuples_per_s"] == pytest.approx(20.0)  # dst from B's records
    assert pairs[((2, 3), (5, 5))]["tuples_per_s"] == pytest.approx(10.0)
    assert pairs[((2, 3), (6, 6))]["tuples_per_s"] == pytest.approx(1.0)
    assert pairs[((4, 4), (6, 6))]["tuples_per_s"] == pytest.approx(0.5)
    assert pairs[((2, 3), (4, 4))]["src_component"] == "split"
    assert pairs[((2, 3), (4, 4))]["dst_component"] == "count"


def test_components_edges_and_skew(documents):
    doc = documents["t-basic"]
    count = doc["components"]["count"]
    assert count["executors"] == 2
    assert count["cpu_percent"] == pytest.approx(4.0)
    assert count["cpu_cv"] == pytest.approx(0.5)  # executors at 1 % and 3 %: σ 1, mean 2
    assert count["in_tuples_per_s"] == pytest.approx(30.0)
    assert count["in_tuples_cv"] == pytest.approx(1 / 3, abs=1e-4)  # 20 and 10 tuples/s
    assert count["out_tuples_per_s"] == pytest.approx(0.5)
    assert doc["components"]["spout"]["cpu_cv"] == 0.0
    assert doc["components"]["split"]["out_tuples_per_s"] == pytest.approx(31.0)
    edges = {(e["from"], e["to"]): e for e in doc["edges"]}
    assert set(edges) == {
        ("spout", "split"),
        ("split", "count"),
        ("split", "__acker"),
        ("count", "__acker"),
    }
    assert edges[("split", "count")]["tuples_per_s"] == pytest.approx(30.0)
    assert edges[("split", "count")]["bytes_per_s"] == pytest.approx(300.0)
    assert edges[("split", "count")]["pairs"] == 2


def test_missing_supervisor(documents):
    doc = documents["t-missing"]
    assert doc["missing"] == [
        {"supervisor_id": "sup-c", "host": "host-sup-c", "port": 6720, "last_seen_ms": 930_000}
    ]
    assert [w["supervisor_id"] for w in doc["workers"]] == ["sup-a"]
    assert set(by_range(doc)) == {(1, 1)}  # C's executor has no CPU in the window


def test_duplicates_and_out_of_order(documents):
    doc = documents["t-dup"]
    assert doc["duplicate_records"] == 2
    assert doc["records"] == 6 and doc["windows"] == 6
    # the highest seq wins per window: 980,000 keeps 100 ms (seq 47 over seq 1),
    # 990,000 keeps 400 ms (seq 99 over seq 46)
    cpu = (100 * 5 + 400) / 60_000 * 100
    assert by_range(doc)[(1, 1)]["cpu_percent"] == pytest.approx(cpu, abs=1e-4)
    assert pair_rates(doc)[((1, 1), (1, 1))]["tuples_per_s"] == pytest.approx((10 * 5 + 40) / 60)


def test_partial_observation_is_not_diluted(documents):
    doc = documents["t-partial"]
    ex = by_range(doc)
    assert ex[(1, 1)]["cpu_percent"] == pytest.approx(1.0)  # 99 ms / 9.9 s
    assert ex[(2, 2)]["cpu_percent"] == pytest.approx(2.0)  # 3 windows of 9.9 s
    assert ex[(2, 2)]["seconds"] == pytest.approx(29.7)
    assert pair_rates(doc)[((1, 1), (2, 2))]["tuples_per_s"] == pytest.approx(10.0)
    assert doc["windows"] == 6
    assert doc["window_end_ms"] == 999_989 and doc["window_start_ms"] == 950_000 - 37 - 9_900


def test_unknown_destination_task_stays_a_one_task_range(documents):
    (pair,) = documents["t-unknown-dst"]["pairs"]
    assert pair["dst"] == [99, 99] and pair["dst_component"] == "?"
    assert pair["tuples_per_s"] == pytest.approx(1.0)


def test_corrupt_records_are_skipped_and_counted(documents):
    doc = documents["t-corrupt"]
    assert doc["corrupt_records"] == 6
    assert doc["records"] == 2
    assert by_range(doc)[(1, 1)]["cpu_percent"] == pytest.approx(0.1)
    empty = documents["t-empty"]
    assert empty["corrupt_records"] == 1
    assert empty["records"] == 0 and empty["windows"] == 0
    assert empty["executors"] == [] and empty["pairs"] == [] and empty["missing"] == []


def test_topologies_do_not_mix(documents):
    # t-basic and t-dup share the worker sup-a:6700 and the window ends
    assert documents["t-dup"]["duplicate_records"] == 2
    assert documents["t-basic"]["duplicate_records"] == 0
    assert set(by_range(documents["t-dup"])) == {(1, 1)}


def test_no_records_skips_spark():
    tables = aggregate_rows(None, flatten([]), NOW, WINDOW)  # Spark is not even needed
    doc = build_documents(tables, ["t"], NOW, WINDOW, {"t": 3})["t"]
    assert doc["records"] == 0 and doc["corrupt_records"] == 3 and doc["windows"] == 0
