"""The throughput model checked against recorded ``bench cluster`` runs
(``scheduler_py/bench/cluster_calibration.py``, ``cluster_report.throughput_model_check``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_py.bench import cluster_calibration, cluster_report

RECORDED = Path("docs/results/emulated-network/instances/cluster.json")


def test_every_recorded_run_is_predicted_and_checked(capsys: pytest.CaptureFixture) -> None:
    document = json.loads(RECORDED.read_text())
    runs = document["runs"]
    for run in runs:
        run["throughput_model"] = cluster_calibration.predicted_run(run, document["emulated_hosts"])
    check = cluster_report.throughput_model_check(runs)
    printed = capsys.readouterr().out
    assert check["runs"] == 27  # every scheduler's run: default, RAS and the brain's
    assert check["median_abs_error"] < 0.05
    assert check["passed"] is (check["max_abs_error"] <= 0.15)
    assert "ras-default" in printed and "default" in printed and "brain:locality" in printed
    # DefaultScheduler's Linear instances: rack-local ones near 2,800/s, predicted alike
    linear = [r for r in runs if r["topology"] == "linear" and r["scheduler"] == "default"]
    for run in linear:
        assert abs(run["throughput_model"]["error"]) < 0.05


def test_a_run_without_a_placement_is_not_predicted() -> None:
    document = json.loads(RECORDED.read_text())
    run = dict(document["runs"][0])
    run.pop("placement")
    result = cluster_calibration.predicted_run(run, document["emulated_hosts"])
    assert "note" in result
    assert cluster_calibration.predicted_run(document["runs"][0], None).get("note")


def test_a_run_re_placed_before_its_interval_is_predicted_on_the_placement_it_kept() -> None:
    document = json.loads(RECORDED.read_text())
    hosts = document["emulated_hosts"]
    run = dict(document["runs"][0])
    run["reconfigurations"] = [
        {"id": "r1", "state": "completed"},
        {"id": "r2", "state": "declined"},
    ]
    # recorded before placement_held existed: a completed re-plan may have moved it mid-interval
    assert "re-placed" in cluster_calibration.predicted_run(run, hosts)["note"]
    # the same placement at the interval's start and end: measured on the one it kept
    run["placement_held"] = True
    held = cluster_calibration.predicted_run(run, hosts)
    assert held["predicted_throughput"] > 0 and "note" not in held
    assert cluster_calibration.sample_of(run, hosts) is not None
    # a stage applied during the interval: not one placement
    run["placement_held"] = False
    assert "re-placed" in cluster_calibration.predicted_run(run, hosts)["note"]
    assert cluster_calibration.sample_of(run, hosts) is None
    # a run whose placement never moved is a sample whatever it recorded
    still = dict(document["runs"][1], placement_held=True)
    assert cluster_calibration.held_while_measured(still)
    assert cluster_calibration.held_while_measured(document["runs"][1])


def test_no_modelled_run_is_n_a(capsys: pytest.CaptureFixture) -> None:
    assert cluster_report.throughput_model_check([{"topology": "wordcount"}])["passed"] is None
    assert "n/a" in capsys.readouterr().out


def test_every_cluster_result_is_a_source_whatever_its_file_name(tmp_path: Path) -> None:
    document = json.loads(RECORDED.read_text())
    assert document["benchmark"] == cluster_calibration.BENCHMARK
    runs = len(cluster_calibration.samples_of(RECORDED))
    assert runs == 27
    # the same result under another name, one of its runs re-placed while it was measured
    moved = json.loads(RECORDED.read_text())
    moved["runs"][0]["reconfigurations"] = [{"state": "completed"}]
    # a re-plan the brain declined moved nothing: the run stays a sample
    moved["runs"][1]["reconfigurations"] = [{"state": "declined"}]
    (tmp_path / "c2-default.json").write_text(json.dumps(moved))
    # JSON that is not a bench cluster result, and a file that is not JSON: no samples
    (tmp_path / "emulated-hosts.json").write_text(json.dumps({"hosts": document["runs"]}))
    (tmp_path / "notes.json").write_text("{ not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    assert len(cluster_calibration.all_samples([str(tmp_path)])) == runs - 1


def test_runs_are_told_apart_by_whether_their_rate_had_levelled_off(tmp_path: Path) -> None:
    # the sixth set: RAS measured after its 30 s warm-up, brain:monitored after its re-plan
    monitored = Path("docs/results/emulated-network/throughput-default/c2-cpu-monitored.json")
    samples = cluster_calibration.samples_of(monitored)
    assert {s.kind for s in samples} == {"cpu"}
    by_scheduler = {s.scheduler: [] for s in samples}
    for sample in samples:
        by_scheduler[sample.scheduler].append(sample.levelled_off)
    assert by_scheduler == {"ras-default": [False] * 6, "brain:monitored": [True] * 6}
    # a run that recorded when its interval began is taken at its word
    document = json.loads(monitored.read_text())
    document["runs"][0]["measured_from_s"] = 302.6
    (tmp_path / "late.json").write_text(json.dumps(document))
    first = cluster_calibration.samples_of(tmp_path / "late.json")[0]
    assert first.scheduler == "ras-default" and first.levelled_off
    found = cluster_calibration.errors(samples, cluster_calibration.DEFAULT_CONSTANTS)
    rows = cluster_calibration.by_when_measured(found)
    assert [(r["kind"], r["levelled_off"], r["runs"]) for r in rows] == [
        ("cpu", False, 6),
        ("cpu", True, 6),
    ]
    assert cluster_calibration.samples_of(RECORDED)[0].kind == "network"
