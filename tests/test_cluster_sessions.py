"""``bench cluster_sessions`` (scheduler_py/bench/cluster_sessions.py): recorded ``bench
cluster`` sessions pooled into one summary, model check and set of targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_py.bench import cluster_sessions
from scheduler_py.bench.cluster_runs import SUMMARY_FIELDS
from scheduler_py.bench.registry import BenchOptions, SettingError, benchmarks

RESULTS = Path("docs/results/emulated-network/throughput-default")
FIRST, SECOND = RESULTS / "c2-cpu-wire.json", RESULTS / "c2-cpu-wire-2.json"


def _pool(tmp_path: Path, *files: Path) -> dict:
    options = BenchOptions(output_dir=tmp_path, extra={"files": ",".join(str(f) for f in files)})
    cluster_sessions.run(options)
    return json.loads((tmp_path / "cluster_sessions.json").read_text())


def test_two_sessions_are_summarised_and_judged_as_one(tmp_path: Path, capsys) -> None:
    assert "cluster_sessions" in benchmarks()
    pooled = _pool(tmp_path, FIRST, SECOND)
    printed = capsys.readouterr().out
    assert len(pooled["runs"]) == 12
    assert {r["session"] for r in pooled["runs"]} == {FIRST.name, SECOND.name}
    assert pooled["summary_fields"] == list(SUMMARY_FIELDS)
    rows = {(r["topology"], r["scheduler"]): r for r in pooled["summary"]}
    assert all(row["runs"] == 2 for row in rows.values())
    # each row is the median of both sessions' runs, as recorded
    star = sorted(
        r["throughput"]
        for r in pooled["runs"]
        if r["topology"] == "star-cpu" and r["scheduler"] == "ras-default"
    )
    assert rows["star-cpu", "ras-default"]["throughput_median"] == pytest.approx(sum(star) / 2)
    verdicts = {t["target"].split(":")[0]: t["passed"] for t in pooled["targets"]}
    # the brain ran faster on more hosts: a MISS as the target states it
    assert verdicts["diamond-cpu LA on"] is False and verdicts["star-cpu LA on"] is False
    assert pooled["throughput_model_check"]["runs"] == 6  # RAS's; the brain's were re-placed
    # the other checks bench cluster writes, for the pooled runs
    assert [c["row"].split(" ")[1] for c in pooled["model_check"]] == ["brain:monitored"] * 3
    assert pooled["link_model_check"] == [] and pooled["default_orders"] == []
    assert "c2-cpu-wire-2.json: 6 runs" in printed and "targets:" in printed
    assert (tmp_path / "cluster_sessions.png").stat().st_size > 0


def test_without_files_the_sessions_in_the_output_directory_are_pooled(tmp_path: Path) -> None:
    # as `scheduler-py bench all` runs it: bench cluster has just written cluster.json there
    (tmp_path / "cluster.json").write_text(FIRST.read_text())
    (tmp_path / "cluster_calibration.json").write_text(json.dumps({"benchmark": "other"}))
    (tmp_path / "notes.json").write_text("{ not json")
    cluster_sessions.run(BenchOptions(output_dir=tmp_path))
    pooled = json.loads((tmp_path / "cluster_sessions.json").read_text())
    assert [s["file"] for s in pooled["sessions"]] == [str(tmp_path / "cluster.json")]
    assert len(pooled["runs"]) == 6
    # run again: its own output (another benchmark) is not a session
    cluster_sessions.run(BenchOptions(output_dir=tmp_path))
    assert len(json.loads((tmp_path / "cluster_sessions.json").read_text())["runs"]) == 6


def test_a_re_placed_run_that_held_its_placement_is_predicted_when_pooled(tmp_path: Path) -> None:
    document = json.loads(SECOND.read_text())
    for run in document["runs"]:
        run["placement_held"] = True  # as bench cluster records it now
    held = tmp_path / "held.json"
    held.write_text(json.dumps(document))
    pooled = _pool(tmp_path, FIRST, held)
    brain = [
        r
        for r in pooled["runs"]
        if r["session"] == "held.json" and r["scheduler"] == "brain:monitored"
    ]
    assert len(brain) == 3
    assert all(r["throughput_model"]["predicted_throughput"] > 0 for r in brain)
    assert pooled["throughput_model_check"]["runs"] == 9


def test_sessions_run_otherwise_are_refused_naming_the_setting(tmp_path: Path) -> None:
    document = json.loads(SECOND.read_text())
    document["settings"]["compiler"] = "c1"
    other = tmp_path / "c1.json"
    other.write_text(json.dumps(document))
    with pytest.raises(SettingError, match="compiler='c1'"):
        _pool(tmp_path, FIRST, other)
    # the adaptive run's settings matter only when a session ran brain:adaptive
    document = json.loads(SECOND.read_text())
    del document["settings"]["adaptive_placed_by"]  # recorded before the setting existed
    other.write_text(json.dumps(document))
    assert len(_pool(tmp_path, FIRST, other)["runs"]) == 12
    document["settings"]["schedulers"].append("brain:adaptive")
    other.write_text(json.dumps(document))
    with pytest.raises(SettingError, match="adaptive_placed_by=None"):
        _pool(tmp_path, FIRST, other)
    document = json.loads(SECOND.read_text())
    document["emulated_hosts"]["hosts"][0]["cpu_cores"] = 0.5
    other.write_text(json.dumps(document))
    with pytest.raises(SettingError, match="other hosts"):
        _pool(tmp_path, FIRST, other)


def test_files_that_are_not_cluster_results_are_refused(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{ not json")
    with pytest.raises(SettingError, match="not a readable JSON"):
        _pool(tmp_path, FIRST, garbage)
    calibration = tmp_path / "calibration.json"
    calibration.write_text(json.dumps({"benchmark": "cluster_calibration", "runs": [{}]}))
    with pytest.raises(SettingError, match="not a bench cluster result"):
        _pool(tmp_path, FIRST, calibration)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"benchmark": "cluster", "runs": []}))
    with pytest.raises(SettingError, match="records no runs"):
        _pool(tmp_path, FIRST, empty)
    with pytest.raises(SettingError, match="no bench cluster result in"):
        cluster_sessions.run(BenchOptions(output_dir=tmp_path / "nothing-here"))
    with pytest.raises(SettingError, match="unknown --set"):
        cluster_sessions.run(BenchOptions(output_dir=tmp_path, extra={"file": str(FIRST)}))
