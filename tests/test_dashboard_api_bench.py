"""scheduler-py bench dashboard_api (scheduler_py/bench/dashboard_api.py) at a tiny size: the
files and the JSON's shape, not the times."""

from __future__ import annotations

import json

import pytest

from scheduler_py.bench import cli, dashboard_api
from scheduler_py.bench.dashboard_synthetic import build, sizes


def test_tiny_run_writes_the_summary_of_every_endpoint(tmp_path, capsys):
    settings = ["executors=20", "hosts=5", "repetitions=5", "warmup=1", "plan_log=7", "history=3"]
    # the worst case: every request that needs an aggregate reads and cleans it
    settings += ["aggregate_cache_secs=0", "prefetch_secs=0"]
    arguments = [part for item in settings for part in ("--set", item)]
    code = cli.main(["dashboard_api", "--output-dir", str(tmp_path), *arguments])
    assert code == 0
    out = capsys.readouterr().out
    assert "targets (server time):" in out and "machine:" in out
    png, data = tmp_path / "dashboard_api.png", tmp_path / "dashboard_api.json"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = json.loads(data.read_text())
    assert result["benchmark"] == "dashboard_api" and result["settings"]["executors"] == 20
    rows = {row["endpoint"]: row for row in result["summary"]}
    expected = set(dashboard_api.endpoints("x")) | {dashboard_api.TOPOLOGY_PAGE}
    assert set(rows) == expected
    for name, row in rows.items():
        assert {"endpoint", "p50_ms", "p99_ms", "target_ms", "pass"} <= set(row)
        assert row["requests"] == 5 and 0 < row["p50_ms"] <= row["p99_ms"] <= row["max_ms"]
        if name.startswith("/api/"):
            assert row["target_ms"] == 50.0 and row["pass"] == (row["p99_ms"] < 50.0)
        elif name == dashboard_api.TOPOLOGY_PAGE:
            assert row["target_ms"] == 300.0
        else:
            assert row["target_ms"] is None and row["pass"] is None
    assert len(result["records"]) == 5 * len(dashboard_api.endpoints("x"))
    assert result["data"]["history"] == 3
    reading = {"/api/v1/cluster", "/api/v1/topologies/{topology}"}
    assert all(r["aggregate_read"] == (r["endpoint"] in reading) for r in result["records"])
    assert len(result["aggregate_read_requests"]) == 5 * len(reading)


def test_topology_page_sums_its_three_requests_per_repetition():
    records = [
        {"endpoint": label, "repetition": rep, "server_ms": 1.0 + k + rep, "client_ms": 2.0,
         "bytes": 10}
        for rep in range(3)
        for k, label in enumerate(dashboard_api.TOPOLOGY_PARTS)
    ]  # fmt: skip
    page = dashboard_api.summarise(records)[-1]
    assert page["endpoint"] == dashboard_api.TOPOLOGY_PAGE
    assert (page["min_ms"], page["p50_ms"], page["max_ms"]) == (6.0, 9.0, 12.0)
    assert page["bytes"] == 30 and page["pass"] is True


def test_a_request_the_server_did_not_time_is_an_error():
    records = [{"request": 1, "path": "/a"}, {"request": 2, "path": "/b"}]
    times = [("/a", 1, 0.001, False), ("/c", 2, 0.001, False)]
    with pytest.raises(RuntimeError, match="request 2"):
        dashboard_api.attach_server_times(records, times)


def test_synthetic_cluster_is_what_the_brain_reports():
    cluster = build(50, 10, 2, 4, 5, 0)
    try:
        (topology,) = cluster.status["topologies"]
        assert len(topology["current"]) == 50 == sum(sizes(50).values())
        assert len(cluster.status["supervisors"]) == 10
        assert {s["rack"] for s in cluster.status["supervisors"]} == {"rack-0", "rack-1"}
        assert len(cluster.plan_log.read_text().splitlines()) == 4
        assert [e["states"][-1] for e in cluster.history].count("declined") == 1
        assert len(cluster.aggregate["executors"]) == 50
        assert cluster.pairs_total == len(cluster.aggregate["pairs"])  # small: nothing cut
    finally:
        cluster.scratch.cleanup()
