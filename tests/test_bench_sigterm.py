"""SIGTERM stops ``scheduler-py bench`` the way Ctrl-C does: the benchmark's ``finally`` blocks
run, so a cluster benchmark stops the clusters it started (scheduler_py/cli/bench.py)."""

from __future__ import annotations

import argparse
import os
import signal
import time

import scheduler_py.bench.cli as bench_cli
from scheduler_py.cli import bench as bench_command


def test_sigterm_unwinds_through_the_benchmark_and_exits_143(monkeypatch, capsys):
    cleaned: list[str] = []

    def benchmark_that_is_killed(_args, _parser):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)  # the handler's exception interrupts the sleep
            raise AssertionError("SIGTERM did not interrupt the benchmark")
        finally:
            cleaned.append("clusters stopped")

    monkeypatch.setattr(bench_cli, "run", benchmark_that_is_killed)
    previous = signal.getsignal(signal.SIGTERM)
    status = bench_command._run(argparse.Namespace(bench_parser=None))
    assert status == 128 + signal.SIGTERM
    assert cleaned == ["clusters stopped"]
    assert "stopped on SIGTERM" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is previous
