"""``bench roundtrip``'s summary and targets (``scheduler_py/bench/roundtrip.py``); the Java loop
itself runs only in the benchmark, never here."""

from __future__ import annotations

import pytest

from scheduler_py.bench import roundtrip


def _record(executors, topologies, brain_ms, ras_ms, status="", ras_assigned=10):
    return {
        "status": status,
        "ras_assigned": ras_assigned,
        "total_executors": 10,
        "executors": executors,
        "topologies": topologies,
        "brain_ms": brain_ms,
        "ras_ms": ras_ms,
        "snapshot_ms": 1.0,
        "call_ms": 2.0,
    }


def test_percentile_interpolates_between_ranks():
    assert roundtrip.percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert roundtrip.percentile([0.0, 10.0], 99) == pytest.approx(9.9)
    assert roundtrip.percentile([5.0], 99) == 5.0


def test_summary_rows_have_exactly_the_issue_fields():
    records = [_record(1000, 1, float(ms), 100.0 + ms) for ms in range(1, 11)]
    records += [_record(10000, 50, 400.0, 300.0)]
    summary = roundtrip.summarise(records)
    assert [tuple(r) for r in summary] == [
        ("executors", "topologies", "scheduler", "p50_ms", "p99_ms")
    ] * 4
    assert [(r["executors"], r["topologies"], r["scheduler"]) for r in summary] == [
        (1000, 1, "brain"),
        (1000, 1, "ras"),
        (10000, 50, "brain"),
        (10000, 50, "ras"),
    ]
    assert summary[0]["p50_ms"] == pytest.approx(5.5)
    assert summary[1]["p99_ms"] == pytest.approx(109.91)


def test_targets_pass_and_miss():
    records = [_record(1000, 1, 10.0, 20.0), _record(10000, 50, 600.0, 300.0)]
    verdicts = {
        label: passed
        for label, passed, _ in roundtrip.targets(roundtrip.summarise(records), records)
    }
    assert verdicts == {
        "brain round p99 < 50 ms at 1,000 executors, 1 topology(ies)": True,
        "brain faster than RAS at 1,000 executors, 1 topology(ies)": True,
        "brain round p99 < 500 ms at 10,000 executors, 50 topology(ies)": False,
        "default round p99 <= 2000 ms at 10,000 executors, 50 topology(ies)": True,
        "brain faster than RAS at 10,000 executors, 50 topology(ies)": False,
    }
    at_50 = [_record(1000, 50, 99.0, 300.0), _record(1000, 50, 100.0, 300.0)]
    labels = {
        label: passed for label, passed, _ in roundtrip.targets(roundtrip.summarise(at_50), at_50)
    }
    assert labels["default round p99 <= 100 ms at 1,000 executors, 50 topology(ies)"] is True
    slow = [_record(1000, 50, 99.0, 300.0), _record(1000, 50, 101.0, 300.0)]
    labels = {
        label: passed for label, passed, _ in roundtrip.targets(roundtrip.summarise(slow), slow)
    }
    assert labels["default round p99 <= 100 ms at 1,000 executors, 50 topology(ies)"] is False
    small = [_record(500, 1, 1.0, 2.0)]
    other = roundtrip.targets(roundtrip.summarise(small), small)
    assert [label for label, _, _ in other] == [
        "brain faster than RAS at 500 executors, 1 topology(ies)"
    ]


def test_fallback_rounds_and_ras_failures_are_not_wins():
    fell_back = [_record(1000, 1, 10.0, 20.0, status="Fallback to DefaultScheduler: timeout")]
    verdicts = roundtrip.targets(roundtrip.summarise(fell_back), fell_back)
    assert [passed for _, passed, _ in verdicts] == [False, False]
    assert "fell back" in verdicts[0][2]
    ras_failed = [_record(1000, 1, 10.0, 1.0, ras_assigned=0)]
    verdicts = roundtrip.targets(roundtrip.summarise(ras_failed), ras_failed)
    assert [passed for _, passed, _ in verdicts] == [True, None]
    assert "not judged" in verdicts[1][2]
