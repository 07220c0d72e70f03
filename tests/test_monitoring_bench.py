"""``scheduler-py bench monitoring_aggregation --quick`` writes its files, and the synthetic
rows it times are all aggregated (every tuple accounted for)."""

from __future__ import annotations

import json

import pytest

from scheduler_py.bench import cli
from scheduler_py.bench.monitoring_aggregation import (
    WINDOW_MS,
    WINDOWS,
    WORKERS,
    synthetic_frames,
)
from scheduler_py.monitoring.aggregate import aggregate_frames, collect
from scheduler_py.monitoring.spark import spark_session


def test_synthetic_rows_are_all_aggregated():
    spark = spark_session("local[2]")
    rows = 30_000
    tables = collect(aggregate_frames(synthetic_frames(spark, rows)))
    assert sum(w["records"] for w in tables.workers) == WORKERS * WINDOWS
    observed_s = WINDOWS * WINDOW_MS / 1000
    total = sum(p["tuples_per_s"] for p in tables.pairs) * observed_s
    assert total == pytest.approx(sum(i * 7919 % 100 + 1 for i in range(rows)))


def test_quick_run_writes_png_and_json(tmp_path, capsys):
    name = "monitoring_aggregation"
    code = cli.main([name, "--quick", "--output-dir", str(tmp_path), "--set", "sizes=20000"])
    assert code == 0
    out = capsys.readouterr().out
    result = json.loads((tmp_path / f"{name}.json").read_text())
    assert result["benchmark"] == name and result["quick"] is True
    assert result["results"][0]["rows"] == 20_000 and result["results"][0]["rate"] > 0
    assert result["driver"]["parse_rate"] > 0
    assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "rows/s" in out and "machine:" in out
