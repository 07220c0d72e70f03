"""The aggregation's output is unchanged by its rewrites for cost, on Spark and on the driver.

``tests/data/aggregate-golden-input.json.gz`` holds recorded window znodes: every scenario of
``test_monitoring_aggregate.py`` (window edges, duplicates, out-of-order, partial observation,
unknown destinations, corrupt records) plus a 40-executor synthetic topology with a
re-published window. ``aggregate-golden-documents.json.gz`` holds the documents the
aggregation wrote for them before its rewrite (one Spark job per table, rows pickled through
Python workers; recorded by ``tests/data/record_aggregate_golden.py``). The current job must
produce the same documents: every table, every row, every field, on both of its engines
(``monitoring/aggregate.py`` on Spark, ``monitoring/aggregate_local.py`` on the driver).
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from pathlib import Path

import pytest

from scheduler_py.monitoring.aggregate import aggregate_rows
from scheduler_py.monitoring.aggregate_local import aggregate_local
from scheduler_py.monitoring.documents import build_documents, parse_windows
from scheduler_py.monitoring.records import flatten
from scheduler_py.monitoring.spark import spark_session
from scheduler_py.monitoring.zk import RawWindow

DATA = Path(__file__).parent / "data"


def load(name: str):
    with gzip.open(DATA / name, "rt") as handle:
        return json.load(handle)


def same(expected, actual, where="") -> list[str]:
    """Differences between two JSON values (floats to 1e-9 relative: Spark may sum in
    another order)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        problems = (
            [f"{where}: keys {sorted(set(expected) ^ set(actual))}"]
            if set(expected) != set(actual)
            else []
        )
        for key in expected.keys() & actual.keys():
            problems += same(expected[key], actual[key], f"{where}.{key}")
        return problems
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: {len(expected)} items expected, {len(actual)} found"]
        pairs = enumerate(zip(expected, actual, strict=True))
        return [p for i, (e, a) in pairs for p in same(e, a, f"{where}[{i}]")]
    if isinstance(expected, float) or isinstance(actual, float):
        numbers = isinstance(actual, (int, float)) and isinstance(expected, (int, float))
        if numbers and math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-9):
            return []
        return [f"{where}: {expected!r} expected, {actual!r} found"]
    return [] if expected == actual else [f"{where}: {expected!r} expected, {actual!r} found"]


@pytest.fixture(scope="module")
def recorded():
    payload = load("aggregate-golden-input.json.gz")
    windows = [
        RawWindow(
            w["topology_id"], w["worker"], w["name"], base64.b64decode(w["data"]), w["mtime_ms"]
        )
        for w in payload["windows"]
    ]
    return payload["now_ms"], payload["window_ms"], windows


@pytest.mark.parametrize("engine", ["spark", "driver"])
@pytest.mark.parametrize("traffic", ["all records", "in-window records only"])
def test_documents_equal_the_recorded_ones(recorded, traffic, engine):
    now, window, windows = recorded
    parsed = parse_windows(windows)
    after = now - window if traffic == "in-window records only" else None
    flat = flatten(parsed.records, traffic_after_ms=after)
    if engine == "spark":
        tables = aggregate_rows(spark_session("local[2]"), flat, now, window)
    else:
        tables = aggregate_local(flat, now - window)
    topologies = sorted({w.topology_id for w in windows})
    documents = json.loads(
        json.dumps(build_documents(tables, topologies, now, window, parsed.corrupt))
    )
    expected = load("aggregate-golden-documents.json.gz")
    assert sorted(documents) == sorted(expected)
    problems = same(expected, documents)
    assert not problems, "\n".join(problems[:20])


def test_the_comparison_sees_a_change(recorded):
    expected = load("aggregate-golden-documents.json.gz")
    changed = json.loads(json.dumps(expected))
    changed["t-synthetic"]["pairs"][3]["tuples_per_s"] += 0.01
    del changed["t-basic"]["executors"][0]["cpu_percent"]
    problems = same(expected, changed)
    assert any("tuples_per_s" in p for p in problems)
    assert any("keys ['cpu_percent']" in p for p in problems)
