"""``scheduler-py serve`` stopped the way a service manager stops it (deploy/systemd/): SIGTERM
runs the same cleanup as Ctrl-C (scheduler_py/cli/termination.py) — the plan log's queued lines
written, a clean exit 0 — instead of Python's default death by signal."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TFramedTransportFactory
from thriftpy2.utils import serialize

from scheduler_py.service.shim_auth import ensure_key, open_reply
from scheduler_py.service.wire import wire
from tests.snapshots import snapshot, supervisor, wordcount

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_listening(port: int, process: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"serve exited early: {process.communicate()[1]}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"serve did not listen on 127.0.0.1:{port} within {timeout} s")


def test_sigterm_flushes_the_plan_log_and_exits_cleanly(tmp_path):
    port = _free_port()
    plan_log = tmp_path / "plans.jsonl"
    key_file = tmp_path / "shim.key"
    key = ensure_key(key_file)  # rounds sealed as the shim seals them, so the brain logs them
    env = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scheduler_py.cli",
            "serve",
            "--port",
            str(port),
            "--algorithm",
            "even",
            "--plan-log",
            str(plan_log),
            "--shim-key-file",
            str(key_file),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_listening(port, process)
        client = make_client(
            wire().SchedulerBrain,
            "127.0.0.1",
            port,
            timeout=30_000,
            trans_factory=TFramedTransportFactory(),
            proto_factory=TBinaryProtocolFactory(),
        )
        rounds = (7, 8, 9)
        for round_ in rounds:
            value = snapshot([supervisor("sup-a", (6700, 6701))], [wordcount()], round_)
            value.timestamp_ms = int(time.time() * 1000)
            sealed = serialize(value, TBinaryProtocolFactory())
            reply = open_reply(client.schedule(None, sealed, key.mac(sealed)), key, key.mac(sealed))
            assert reply.plans, f"round {round_}: no plan"
        client.close()
        process.send_signal(signal.SIGTERM)  # right after the replies: lines may still be queued
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, f"exit {process.returncode}; stderr:\n{stderr}"
    assert "stopped on SIGTERM" in stderr, stderr
    assert "Traceback" not in stderr, stderr
    assert plan_log.exists(), stderr
    logged = [json.loads(line)["round"] for line in plan_log.read_text().splitlines()]
    assert logged == list(rounds), f"plan log rounds {logged}, expected {list(rounds)}"
