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


def test_no_modelled_run_is_n_a(capsys: pytest.CaptureFixture) -> None:
    assert cluster_report.throughput_model_check([{"topology": "wordcount"}])["passed"] is None
    assert "n/a" in capsys.readouterr().out
