"""Distinct exit statuses (``scheduler_py/cli/exit_codes.py``): a usage error, bad input data,
a missing input, an unreachable service and an unusable configuration are told apart."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_py.cli import exit_codes, main

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def no_ambient_storm(monkeypatch):
    for name in ("STORM_CONF_DIR", "STORM_HOME", "SCHEDULER_PY_BRAIN", "SCHEDULER_BRAIN"):
        monkeypatch.delenv(name, raising=False)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_statuses_are_distinct_and_follow_sysexits():
    codes = [
        exit_codes.OK,
        exit_codes.FAILED,
        exit_codes.USAGE,
        exit_codes.DATA_ERROR,
        exit_codes.NO_INPUT,
        exit_codes.UNAVAILABLE,
        exit_codes.CONFIG,
    ]
    assert codes == [0, 1, 2, 65, 66, 69, 78]
    assert set(exit_codes.MEANINGS) == set(codes)


def test_usage_errors_are_two(tmp_path, capsys):
    from tests.test_cli_plan import PROBLEM

    with pytest.raises(SystemExit) as usage:
        main(["serve", "--port", "many"])
    assert usage.value.code == exit_codes.USAGE
    problem = tmp_path / "problem.json"
    problem.write_text(json.dumps(PROBLEM))
    assert main(["plan", "-a", "no-such-algorithm", "-i", str(problem)]) == exit_codes.USAGE
    assert "unknown algorithm 'no-such-algorithm'" in capsys.readouterr().err


def test_bad_input_data_and_a_missing_input_file(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "problem.json"
    bad.write_text("{not json")
    assert main(["plan", "-a", "even", "-i", str(bad)]) == exit_codes.DATA_ERROR
    assert "problem file is not JSON" in capsys.readouterr().err
    missing = tmp_path / "absent.json"
    assert main(["plan", "-a", "even", "-i", str(missing)]) == exit_codes.NO_INPUT
    error = capsys.readouterr().err
    assert (
        error.startswith("scheduler-py plan: cannot read the problem file")
        and str(missing) in error
    )
    bad.write_text(json.dumps({"nodes": [], "topologies": "not a list"}))
    assert main(["plan", "-a", "even", "-i", str(bad)]) == exit_codes.DATA_ERROR


def test_an_unreachable_brain_is_the_unavailable_status(capsys):
    port = _closed_port()
    status = main(["history", "wc", "--no-storm-conf", "--brain", f"127.0.0.1:{port}"])
    assert status == exit_codes.UNAVAILABLE
    error = capsys.readouterr().err
    assert error.startswith("scheduler-py history: cannot reach the brain at 127.0.0.1:")


def test_an_unreachable_nimbus_is_the_unavailable_status(capsys):
    port = _closed_port()
    status = main(["metrics", "wc", "--no-storm-conf", "--nimbus", f"127.0.0.1:{port}"])
    assert status == exit_codes.UNAVAILABLE
    assert f"cannot reach Nimbus at 127.0.0.1:{port}" in capsys.readouterr().err


def test_a_missing_operator_secret_is_a_configuration_error(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("SCHEDULER_PY_SECRET", raising=False)
    monkeypatch.delenv("SCHEDULER_PY_SECRET_FILE", raising=False)
    status = main(
        [
            "trigger",
            "pause",
            "--no-storm-conf",
            "--secret-file",
            str(tmp_path / "none" / "operator.secret"),
        ]
    )
    assert status == exit_codes.CONFIG
    assert "no operator secret found" in capsys.readouterr().err


def test_the_reference_documents_every_status():
    text = (REPO / "docs" / "configuration.md").read_text()
    assert exit_codes.markdown_table() in text, (
        "docs/configuration.md's exit status table differs from scheduler_py/cli/exit_codes.py"
    )


def test_a_reader_that_stops_reading_is_not_an_error_message():
    """`scheduler-py history | grep -q …` closes the pipe early: no "[Errno 32]" line."""
    script = (
        "import builtins, sys\n"
        "from scheduler_py import cli\n"
        "def closed(*args, **kwargs):\n"
        "    raise BrokenPipeError(32, 'Broken pipe')\n"
        "builtins.print = closed\n"
        "sys.exit(cli.main(['algorithms']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == exit_codes.FAILED
    assert "Broken pipe" not in done.stderr and "Traceback" not in done.stderr, done.stderr
