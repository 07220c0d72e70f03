"""``--log-level`` and ``--log-file`` of every long-running command
(scheduler_py/cli/logging_setup.py): an unknown level is a usage error naming the accepted
ones, and a log file survives logrotate's rename."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_py.cli import build_parser
from scheduler_py.cli.logging_setup import LOG_LEVELS, configure_logging, log_level

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text", ["debug", "INFO", " Warning ", "error", "critical"])
def test_every_logging_level_is_accepted_in_any_case(text):
    assert log_level(text) == text.strip().upper()


@pytest.mark.parametrize("text", ["LOUD", "", "WARN ING", "10", "NOTSET"])
def test_anything_else_names_the_accepted_levels(text):
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        log_level(text)
    assert ", ".join(LOG_LEVELS) in str(refused.value)
    assert repr(text) in str(refused.value)
    with pytest.raises(ValueError, match="expected one of DEBUG"):
        configure_logging(text, None)


@pytest.mark.parametrize("command", [["serve"], ["aggregate"]])
def test_the_parsers_validate_the_level(command, capsys):
    assert build_parser().parse_args([*command, "--log-level", "debug"]).log_level == "DEBUG"
    assert build_parser().parse_args(command).log_level == "INFO"
    with pytest.raises(SystemExit) as usage:
        build_parser().parse_args([*command, "--log-level", "loud"])
    assert usage.value.code == 2
    err = capsys.readouterr().err
    assert "argument --log-level: expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL" in err
    assert "'loud'" in err


def test_serve_refuses_an_unknown_level_before_starting():
    done = subprocess.run(
        [sys.executable, "-m", "scheduler_py.cli", "serve", "--log-level", "LOUD"],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL" in done.stderr
    assert "listening" not in done.stderr


ROTATE = """
import logging, os, sys
from scheduler_py.cli.logging_setup import configure_logging
path = sys.argv[1]
configure_logging("info", path)
log = logging.getLogger("rotation")
log.info("before the rotation")
os.rename(path, path + ".1")  # what logrotate does by default (no copytruncate)
log.info("after the rotation")
log.debug("below the level")
"""


def test_a_rotated_log_file_is_reopened(tmp_path):
    path = tmp_path / "logs" / "brain.log"
    subprocess.run(
        [sys.executable, "-c", ROTATE, str(path)],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        check=True,
        timeout=120,
    )
    rotated = (tmp_path / "logs" / "brain.log.1").read_text()
    assert "before the rotation" in rotated and "after the rotation" not in rotated
    current = path.read_text()
    assert "after the rotation" in current and "below the level" not in current
