"""Spark master URLs (scheduler_py/monitoring/masters.py): which get the loopback driver
address, and `scheduler-py aggregate` refusing an unreachable master with one line."""

from __future__ import annotations

import socket
import time

import pytest

from scheduler_py import cli as top_cli
from scheduler_py.devtools.zkserver import free_port
from scheduler_py.monitoring.masters import (
    master_addresses,
    master_on_loopback,
    unreachable_master,
)


@pytest.mark.parametrize(
    ("master", "on_loopback"),
    [
        ("spark://127.0.0.1:7077", True),
        ("spark://127.0.0.2:12077", True),
        ("spark://localhost:7077,127.0.0.1:7078", True),
        ("spark://[::1]:7077", True),
        ("spark://spark-master:7077", False),
        ("spark://10.0.0.5:7077", False),
        ("spark://127.0.0.1:7077,10.0.0.5:7077", False),
        ("local[*]", False),
        ("yarn", False),
    ],
)
def test_master_on_loopback(master, on_loopback):
    assert master_on_loopback(master) is on_loopback


@pytest.mark.parametrize(
    ("master", "addresses"),
    [
        ("spark://127.0.0.1:7077", [("127.0.0.1", 7077)]),
        ("spark://spark-master", [("spark-master", 7077)]),
        ("spark://a:1,[::1]:2", [("a", 1), ("::1", 2)]),
        ("local[2]", []),
    ],
)
def test_master_addresses(master, addresses):
    assert master_addresses(master) == addresses


def test_aggregate_refuses_an_unreachable_master_at_once(capsys):
    closed = free_port()
    assert unreachable_master("local[*]") is None
    started = time.monotonic()
    code = top_cli.main(
        [
            "aggregate",
            "--once",
            "--master",
            f"spark://127.0.0.1:{closed}",
            "--no-cleanup",
            "--nice",
            "0",
            "--cpu-weight",
            "0",
        ]
    )
    assert code == 69  # an unreachable service (scheduler_py/cli/exit_codes.py)
    assert time.monotonic() - started < 10  # no Spark started, no minute of retries
    error = capsys.readouterr().err
    assert f"Spark master spark://127.0.0.1:{closed} unreachable (127.0.0.1:{closed}: " in error
    assert "make spark-up" in error and "Traceback" not in error


def test_a_listening_master_is_reachable():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert unreachable_master(f"spark://127.0.0.1:{server.getsockname()[1]}") is None
