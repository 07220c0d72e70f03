"""Window records (contract §1): parsing, validation, and the pure-Python parts of the
aggregation (change signal, znode budget, durations). No Spark, no ZooKeeper."""

from __future__ import annotations

import copy
import gzip
import json

import pytest

from scheduler_py.cli.aggregate import parse_duration
from scheduler_py.monitoring.change import (
    apply_change,
    change_vector,
    l1_relative,
    reference_document,
)
from scheduler_py.monitoring.documents import fit_znode
from scheduler_py.monitoring.records import (
    CorruptRecord,
    decode,
    encode,
    flatten,
    parse_window,
    record_document,
)

# the contract's example, with Storm's __system executor as a real worker reports it
EXAMPLE = {
    "v": 1,
    "topology_id": "wordcount-1-1795250648",
    "supervisor_id": "8a1f-127.0.0.1",
    "host": "127.0.0.2",
    "port": 6710,
    "seq": 17,
    "window_start_ms": 1795250700000,
    "window_end_ms": 1795250710000,
    "worker_cpu_ms": 812.0,
    "overhead_cpu_ms": 240.5,
    "executors": [
        {
            "task_start": 4,
            "task_end": 4,
            "component": "count",
            "thread_cpu_ms": 35.2,
            "subprocess_cpu_ms": 410.7,
            "subprocess_pids": [23117],
        },
        {
            "task_start": 9,
            "task_end": 10,
            "component": "split",
            "thread_cpu_ms": 1,
            "subprocess_cpu_ms": 0,
            "subprocess_pids": [],
        },
        {
            "task_start": -1,
            "task_end": -1,
            "component": "__system",
            "thread_cpu_ms": 2.0,
            "subprocess_cpu_ms": 0.0,
            "subprocess_pids": [],
        },
    ],
    "traffic": [{"src": 9, "dst": 4, "stream": "default", "tuples": 1200, "bytes": 96000}],
}


def gz(document) -> bytes:
    return gzip.compress(json.dumps(document).encode())


def test_contract_example_parses():
    record = parse_window(gz(EXAMPLE))
    assert record.worker == "8a1f-127.0.0.1:6710"
    assert record.duration_ms == 10_000
    assert record.executors[0].subprocess_pids == (23117,)
    assert record.executors[2].task_start == -1
    assert record.traffic[0].bytes == 96000.0
    assert record_document(record) == EXAMPLE | {
        "executors": [dict(e) for e in EXAMPLE["executors"]]
    }
    assert parse_window(encode(record_document(record))) == record


def test_unknown_fields_are_kept_aside_and_truncated_pairs_read():
    doc = dict(EXAMPLE, truncated_pairs=12, monitor_version="1.2")
    record = parse_window(gz(doc))
    assert record.truncated_pairs == 12
    assert record.extra == {"monitor_version": "1.2"}


def _without(key):
    doc = copy.deepcopy(EXAMPLE)
    del doc[key]
    return doc


def _with(path, value):
    doc = copy.deepcopy(EXAMPLE)
    target = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"{}", "bad gzip"),
        (gz(EXAMPLE)[:-10], "truncated"),
        (gzip.compress(b"{oops"), "bad JSON"),
        (gzip.compress(b"\xff\xfe"), "bad UTF-8"),
        (gz([1, 2]), "JSON object"),
        (gz(_without("window_end_ms")), "missing field window_end_ms"),
        (gz(_without("executors")), "missing field executors"),
        (gz(_without("traffic")), "missing field traffic"),
        (gz(_with(("executors", 0, "thread_cpu_ms"), -1.0)), "negative"),
        (gz(_with(("traffic", 0, "tuples"), -3)), "negative"),
        (gz(_with(("worker_cpu_ms",), True)), "must be a number"),
        (gz(_with(("port",), 0)), "port must be >= 1"),
        (gz(_with(("seq",), "17")), "seq must be an integer"),
        (gz(_with(("v",), 3)), "unsupported record version"),
        (gz(_with(("window_end_ms",), 1795250700000)), "is not after"),
        (gz(_with(("executors", 0, "task_end"), 3)), "task_end 3 < task_start 4"),
        (gz(_with(("executors", 1, "task_start"), 4)), "overlap"),
        (gz(_with(("traffic", 0, "src"), 5)), "traffic source task 5"),
        (gz(_with(("executors", 0, "component"), "")), "non-empty string"),
        (gz(_with(("executors", 0, "subprocess_pids"), None)), "subprocess_pids"),
        (gz(_with(("truncated_pairs",), -1)), "truncated_pairs"),
    ],
)
def test_corrupt_records_are_refused_with_a_reason(data, reason):
    with pytest.raises(CorruptRecord, match=reason):
        parse_window(data)


def test_gzip_bomb_is_refused():
    bomb = gzip.compress(b" " * (17 * 1024 * 1024))
    with pytest.raises(CorruptRecord, match="inflates past"):
        decode(bomb)


def test_flatten_rows():
    record = parse_window(gz(EXAMPLE))
    flat = flatten([record, record], first_id=5)
    assert [r[0] for r in flat.records] == [5, 6]
    assert flat.executors[0] == (5, 4, 4, "count", 35.2, 410.7)
    assert flat.traffic[0] == (5, 9, 4, "default", 1200.0, 96000.0)
    assert len(flat.executors) == 6


# --------------------------------------------------------------------------- change signal


def doc(cpu, pairs, computed=1000, records=3):
    return {
        "topology_id": "t",
        "computed_at_ms": computed,
        "records": records,
        "executors": [
            {"task_start": s, "task_end": e, "cpu_percent": c} for (s, e), c in cpu.items()
        ],
        "pairs": [
            {"src": list(s), "dst": list(d), "tuples_per_s": n} for (s, d), n in pairs.items()
        ],
    }


def test_l1_relative_over_the_union_of_keys():
    ref = change_vector(doc({(1, 1): 10.0, (2, 2): 10.0}, {((1, 1), (2, 2)): 80.0}))
    same = change_vector(doc({(1, 1): 10.0, (2, 2): 10.0}, {((1, 1), (2, 2)): 80.0}))
    assert l1_relative(same, ref) == 0.0
    moved = change_vector(doc({(1, 1): 20.0, (3, 3): 5.0}, {((1, 1), (2, 2)): 60.0}))
    # CPU: (|20-10| + |0-10| + |5-0|) / 20 = 1.25; pairs: |60-80| / 80 = 0.25; mean 0.75
    assert l1_relative(moved, ref) == pytest.approx(0.75)
    zero = {"cpu": {}, "pairs": {}}
    assert l1_relative(zero, zero) == 0.0
    assert l1_relative(moved, zero) is None


def test_change_signal_weighs_cpu_and_traffic_each_against_its_own_reference():
    # a traffic-heavy topology (1000 tuples/s) whose CPU drops by 80 points
    ref = change_vector(doc({(1, 1): 90.0, (2, 2): 10.0}, {((1, 1), (2, 2)): 1000.0}))
    cpu_drop = change_vector(doc({(1, 1): 10.0, (2, 2): 10.0}, {((1, 1), (2, 2)): 1000.0}))
    assert l1_relative(cpu_drop, ref) == pytest.approx(0.4)  # CPU 80 %, traffic 0 %
    traffic_drop = change_vector(doc({(1, 1): 90.0, (2, 2): 10.0}, {((1, 1), (2, 2)): 200.0}))
    assert l1_relative(traffic_drop, ref) == pytest.approx(0.4)  # the same share, same signal
    new_pair = change_vector(doc({(1, 1): 90.0, (2, 2): 10.0}, {}))
    no_traffic_ref = change_vector(doc({(1, 1): 90.0, (2, 2): 10.0}, {}))
    assert l1_relative(ref, no_traffic_ref) == pytest.approx(0.5)  # traffic appeared: 100 %
    assert l1_relative(new_pair, no_traffic_ref) == 0.0


def test_first_aggregate_becomes_the_reference_then_change_is_measured():
    first = doc({(1, 1): 10.0}, {((1, 1), (2, 2)): 10.0}, computed=1000)
    ref = apply_change(first, None)
    assert ref == reference_document(first)
    assert first["change"] == {"l1_relative": 0.0, "reference_computed_at_ms": 1000}
    later = doc({(1, 1): 15.0}, {((1, 1), (2, 2)): 10.0}, computed=2000)
    assert apply_change(later, ref) is None  # the stored reference stays
    assert later["change"] == {"l1_relative": 0.25, "reference_computed_at_ms": 1000}
    reset = doc({(1, 1): 15.0}, {}, computed=3000)
    assert apply_change(reset, ref, reset=True)["computed_at_ms"] == 3000
    assert reset["change"]["l1_relative"] == 0.0
    empty = doc({}, {}, computed=4000, records=0)
    assert apply_change(empty, None) is None  # nothing measured: not a reference
    assert empty["change"]["l1_relative"] is None
    assert apply_change(later, {"garbage": 1}) is not None  # unusable stored reference


def test_fit_znode_drops_the_smallest_pairs():
    pairs = [
        {
            "src": [i, i],
            "dst": [i + 1, i + 1],
            "tuples_per_s": float(i),
            "bytes_per_s": 1.0,
            "pad": f"{i:x}" * 40,
        }
        for i in range(4000)
    ]
    document = {"topology_id": "t", "pairs": pairs}
    data = fit_znode(document, budget=40_000)
    assert len(data) <= 40_000
    kept = decode(data)["pairs"]
    assert 0 < len(kept) < 4000
    assert min(p["tuples_per_s"] for p in kept) > 4000 - len(kept) - 1
    assert decode(data)["truncated_output_pairs"] == 4000 - len(kept)
    small = {"topology_id": "t", "pairs": pairs[:3]}
    assert decode(fit_znode(small)) == small


@pytest.mark.parametrize(
    ("text", "ms"),
    [("30s", 30_000), ("5m", 300_000), ("500ms", 500), ("2", 2000), ("1.5h", 5_400_000)],
)
def test_parse_duration(text, ms):
    assert parse_duration(text) == ms


@pytest.mark.parametrize("text", ["", "0s", "abc", "-5s", "10 parsecs"])
def test_parse_duration_rejects(text):
    with pytest.raises(Exception, match="duration"):
        parse_duration(text)


def test_a_reference_too_big_for_a_znode_keeps_its_heaviest_pairs():
    from scheduler_py.monitoring.change import fit_reference, l1_relative

    rates = {f"{i}-{i}>{i + 1}-{i + 1}": float(1 + i % 997) for i in range(120_000)}
    full = {"v": 1, "topology_id": "t", "computed_at_ms": 1, "cpu": {"1-1": 50.0}, "pairs": rates}
    assert len(encode(full)) > 900_000
    trimmed = fit_reference(full)
    assert len(encode(trimmed)) <= 900_000
    kept = trimmed["pairs"]
    assert 0 < len(kept) < len(rates) and trimmed["truncated_pairs"] == len(rates) - len(kept)
    assert min(kept.values()) == trimmed["pairs_floor"]
    assert all(rate >= trimmed["pairs_floor"] for rate in kept.values())
    # the same measurement against its trimmed reference: no change
    x = {"cpu": full["cpu"], "pairs": rates}
    assert l1_relative(x, trimmed) == 0.0
    # a new pair above the floor is a change; one below it is not
    above = {**rates, "new>pair": trimmed["pairs_floor"] * 10}
    assert l1_relative({"cpu": full["cpu"], "pairs": above}, trimmed) > 0.0
    small = dict(fit_reference({**full, "pairs": {"a>b": 5.0}}))
    assert "pairs_floor" not in small  # fits: unchanged
