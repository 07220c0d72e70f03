"""The cluster benchmarks run from a checkout (scheduler_py/bench/checkout.py): installed as the
scheduler-py-bench package alone, without deploy/, topologies/ and storm_plugin/ beside it,
they stop before starting anything with one message naming what is missing and where to run
from, and exit 78 (EX_CONFIG, scheduler_py/cli/exit_codes.py), not with a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from scheduler_py.bench import checkout, cli
from scheduler_py.cli import exit_codes

REPO = Path(__file__).resolve().parents[1]


def test_from_this_checkout_the_scripts_are_found():
    assert checkout.checkout_path("deploy/cluster-up.sh") == REPO / "deploy" / "cluster-up.sh"


def test_the_status_is_the_clis_configuration_error():
    assert cli.CHECKOUT_MISSING_STATUS == exit_codes.CONFIG


def test_a_missing_file_names_itself_and_where_to_run_from(tmp_path, monkeypatch):
    monkeypatch.setattr(checkout, "REPO", tmp_path)
    with pytest.raises(checkout.CheckoutMissing) as caught:
        checkout.checkout_path("deploy/cluster-up.sh")
    message = str(caught.value)
    assert f"expected deploy/cluster-up.sh at {tmp_path / 'deploy' / 'cluster-up.sh'}" in message
    assert "found nothing" in message and "clone of the repository" in message


@pytest.mark.parametrize(
    ("benchmark", "missing"),
    [
        ("reconfig_pause", "deploy/cluster-up.sh"),
        ("monitor_accuracy", "deploy/cluster-up.sh"),
        ("roundtrip", "storm_plugin/pom.xml"),
    ],
)
def test_installed_without_a_checkout_a_cluster_benchmark_stops_at_once(
    benchmark, missing, tmp_path
):
    """The package as the two wheels install it (``scheduler_py/`` in a site directory, no
    checkout around it), run with ``-S`` so this checkout's editable install stays out."""
    site = tmp_path / "site"
    shutil.copytree(
        REPO / "scheduler_py", site / "scheduler_py", ignore=shutil.ignore_patterns("__pycache__")
    )
    path = os.pathsep.join([str(site), sysconfig.get_paths()["purelib"]])
    argv = ["bench", benchmark, "--quick", "--output-dir", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-S", "-m", "scheduler_py.cli", *argv],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == exit_codes.CONFIG, (done.returncode, done.stdout, done.stderr)
    assert f"error: {benchmark}: " in done.stderr and f"expected {missing} at" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "out" / f"{benchmark}.json").exists(), "no result without a run"
