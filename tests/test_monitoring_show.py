"""``scheduler-py metrics``: the aggregate rendered for an operator."""

from __future__ import annotations

from scheduler_py.monitoring.show import render

DOCUMENT = {
    "window_start_ms": 1_000_000,
    "window_end_ms": 1_060_000,
    "computed_at_ms": 1_065_000,
    "windows": 6,
    "records": 18,
    "corrupt_records": 1,
    "duplicate_records": 0,
    "executors": [
        {
            "task_start": 4,
            "task_end": 4,
            "component": "count",
            "cpu_percent": 12.04,
            "host": "127.0.0.1",
            "port": 6700,
        },
        {
            "task_start": -1,
            "task_end": -1,
            "component": "__system",
            "cpu_percent": 0.3,
            "host": "127.0.0.1",
            "port": 6700,
        },
        {
            "task_start": 2,
            "task_end": 3,
            "component": "__acker",
            "cpu_percent": 8.6,
            "host": "127.0.0.3",
            "port": 6720,
        },
    ],
    "edges": [
        {"from": "sentences", "to": "split", "tuples_per_s": 85.5, "bytes_per_s": 3512.0},
        {"from": "split", "to": "count", "tuples_per_s": 576.9, "bytes_per_s": 5988.0},
    ],
    "missing": [{"supervisor_id": "sup-b", "port": 6710, "last_seen_ms": 0}],
    "change": {"l1_relative": 0.125},
}


def test_render_lists_executors_in_task_order_and_edges_by_rate():
    text = render(DOCUMENT, now_ms=1_075_000)
    lines = text.splitlines()
    assert lines[0] == (
        "measured over 60 s (6 windows), computed 10 s ago from 18 records (1 corrupt, 0 duplicate)"
    )
    executor_rows = [line.split() for line in lines if line.startswith(("count", "__"))]
    assert [row[:2] for row in executor_rows] == [
        ["__system", "-1"],
        ["__acker", "2-3"],
        ["count", "4"],
    ]
    assert executor_rows[2][-1] == "12.0"
    edges = [line for line in lines if "->" in line]
    assert edges[0].startswith("split -> count") and edges[1].startswith("sentences -> split")
    assert "missing workers (no records in the last window): sup-b:6710" in text
    assert text.endswith("change signal vs reference: 0.125 (relative L1)")


def test_first_aggregate_has_no_change_signal():
    document = dict(DOCUMENT, missing=[], change={"l1_relative": None})
    text = render(document, now_ms=1_065_000)
    assert "missing workers" not in text
    assert text.endswith("change signal vs reference: n/a (first aggregate)")


def test_interworker_traffic_counts_pairs_across_workers_only():
    from scheduler_py.monitoring.show import interworker_traffic

    document = DOCUMENT | {
        "pairs": [
            {"src": [4, 4], "dst": [2, 3], "tuples_per_s": 30.0},  # 6700 -> 6720: remote
            {"src": [4, 4], "dst": [-1, -1], "tuples_per_s": 10.0},  # same worker
            {"src": [9, 9], "dst": [4, 4], "tuples_per_s": 99.0},  # unknown executor: skipped
        ]
    }
    assert interworker_traffic(document) == (30.0, 40.0)
    assert "inter-worker traffic: 30.0 of 40.0 tuples/s (75%)" in render(document, 1_065_000)


def test_counts_mode_edges_show_bytes_as_unknown_not_zero():
    edges = [
        {"from": "split", "to": "count", "tuples_per_s": 576.9, "bytes_per_s": 0.0},
        {"from": "count", "to": "sink", "tuples_per_s": 0.0, "bytes_per_s": 0.0},
    ]
    estimated = render(DOCUMENT | {"traffic_source": "estimated", "edges": edges}, 1_065_000)
    rows = {line.split()[0]: line.split() for line in estimated.splitlines() if "->" in line}
    assert rows["split"][-1] == "n/a"
    assert rows["count"][-1] == "0", "an idle edge has 0 bytes/s, known"
    exact = render(DOCUMENT | {"traffic_source": "exact", "edges": edges}, 1_065_000)
    assert "n/a" not in exact.split("change signal")[0]


def test_the_netty_totals_and_the_tuple_size_they_give_are_shown():
    wire = {"sent_messages_per_s": 300.0, "written_bytes_per_s": 26_200.0, "workers": 2}
    unsized = render(DOCUMENT | {"wire": wire}, 1_065_000)
    assert "300.0 messages/s, 26200 bytes/s written by Netty" in unsized
    assert "tuple size not estimated" in unsized
    sized = render(DOCUMENT | {"wire": wire | {"payload_bytes": 200.0}}, 1_065_000)
    assert "200 B per user tuple" in sized
    assert "between workers:" not in render(DOCUMENT, 1_065_000)
