"""``scheduler-py bench monitor_accuracy --set source=offline``: the comparison on synthetic
records with a known truth runs quickly, prints its targets and writes its files; the
analysis sees an estimate that is off."""

from __future__ import annotations

import json

from scheduler_py.bench import cli
from scheduler_py.bench.monitor_accuracy import analyse, offline_records
from scheduler_py.monitoring.records import TaskCounts, WindowRecord


def test_offline_run_writes_png_json_and_targets(tmp_path, capsys):
    name = "monitor_accuracy"
    code = cli.main(
        [
            name,
            "--quick",
            "--output-dir",
            str(tmp_path),
            "--set",
            "source=offline",
            "--set",
            "topologies=wordcount,star",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "estimated pair traffic within 10% of exact on every topology" in out
    result = json.loads((tmp_path / f"{name}.json").read_text())
    assert result["source"] == "offline"
    rows = result["results"]
    assert [(r["topology"], r["load_aware"]) for r in rows] == [
        ("wordcount", True),
        ("wordcount", False),
        ("star", True),
        ("star", False),
    ]
    for row in rows:
        assert row["exact_source"] == "exact" and row["estimate_source"] == "estimated"
        assert row["weighted_relative_error"] < 0.05
        assert row["plan_ratio"] >= 1.0 - 1e-9  # the exact matrix's own plan is priced by it
    assert result["targets"][0]["passed"] is True
    assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _skewed(record: WindowRecord) -> WindowRecord:
    """Storm's counts of ``count``'s inputs halved for one task: the estimate moves."""
    counts = tuple(
        TaskCounts(
            c.task,
            c.component,
            c.emitted,
            c.transferred,
            {k: v * 0.5 for k, v in c.executed.items()} if c.task == 4 else c.executed,
            c.execute_ms,
            c.acked,
            c.failed,
        )
        for c in record.task_counts
    )
    return WindowRecord(**{**record.__dict__, "task_counts": counts})


def test_the_error_sees_a_wrong_estimate():
    records = offline_records("wordcount", True, seed=3)
    good = analyse(records)["weighted_relative_error"]
    bad = analyse([_skewed(r) for r in records])["weighted_relative_error"]
    assert good < 0.01 < bad
