"""``scheduler-py dashboard`` as a service manager runs it (deploy/systemd/): served by waitress
(scheduler_py/dashboard/server.py), bounded, stopped cleanly by SIGTERM
(scheduler_py/cli/termination.py), and a ``--log-level`` that is not a level is a usage error."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scheduler_py.dashboard.limits import MAX_BODY_BYTES

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _machine_timeout() -> float:
    """How long a Python start-up may take here: ten times this interpreter's own start,
    measured now, and at least 10 s (a loaded 2-core machine starts Python in 0.1-1 s)."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import flask, waitress"], check=True)
    return max(10.0, 10 * (time.monotonic() - started))


class _Dashboard:
    """The dashboard command in a child process; its stdout lines collected on a thread so
    the test waits on a condition (a line seen, the process gone), never on a fixed sleep."""

    def __init__(self, tmp_path: Path, *extra: str) -> None:
        self.port = _free_port()
        brain_port = _free_port()  # nothing listens: pages still render, naming the brain down
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "scheduler_py.cli",
                "dashboard",
                "--port",
                str(self.port),
                "--brain",
                f"127.0.0.1:{brain_port}",
                *extra,
            ],
            cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_listening(self, timeout: float) -> str:
        url = f"http://127.0.0.1:{self.port}/"
        with self._changed:
            seen = self._changed.wait_for(
                lambda: any(url in line for line in self.lines) or self.process.poll() is not None,
                timeout,
            )
        assert seen and self.process.poll() is None, (
            f"the dashboard did not announce {url} within {timeout:.0f} s "
            f"(exit {self.process.poll()}): {self.lines} {self.stop_output()}"
        )
        return url

    def stop_output(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        _, stderr = self.process.communicate()
        return stderr

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


@pytest.fixture
def dashboard(tmp_path):
    started: list[_Dashboard] = []

    def start(*extra: str) -> _Dashboard:
        started.append(_Dashboard(tmp_path, *extra))
        return started[-1]

    yield start
    for one in started:
        one.close()


def _get(port: int, path: str, timeout: float) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("GET", path)
    return connection.getresponse()


def test_waitress_serves_pages_and_sigterm_stops_it_cleanly(dashboard):
    timeout = _machine_timeout()
    child = dashboard("--log-level", "debug")
    child.wait_listening(timeout)
    page = _get(child.port, "/", timeout)
    body = page.read().decode()
    assert page.status == 200, body
    assert page.getheader("Server") == "scheduler-py", page.getheaders()  # waitress, not werkzeug
    assert "<html" in body.lower()
    api = _get(child.port, "/api/v1/cluster", timeout)
    api.read()
    assert api.status in (200, 503), api.status  # the brain is down: an answer, not a hang

    held = socket.create_connection(("127.0.0.1", child.port))  # an idle keep-alive client
    try:
        child.process.send_signal(signal.SIGTERM)
        _, stderr = child.process.communicate(timeout=timeout)
    finally:
        held.close()
    assert child.process.returncode == 0, f"exit {child.process.returncode}; stderr:\n{stderr}"
    assert "stopped on SIGTERM" in stderr, stderr
    assert "Traceback" not in stderr, stderr
    with pytest.raises(OSError):  # the listening socket is closed
        socket.create_connection(("127.0.0.1", child.port), timeout=timeout).close()


def test_sigterm_while_requests_are_being_handled_stops_without_a_closed_descriptor(dashboard):
    """The stop closes the loop's wake-up pipe only after the workers finish: a worker that
    finished a request during the stop used to write to it closed (``EBADF``)."""
    timeout = _machine_timeout()
    child = dashboard()
    child.wait_listening(timeout)
    answered: list[int] = []
    stop_clients = threading.Event()

    def keep_requesting() -> None:
        while not stop_clients.is_set():
            try:
                page = _get(child.port, "/", timeout)
                page.read()
                answered.append(page.status)
            except (OSError, http.client.HTTPException):
                return  # the server closed: expected once SIGTERM lands

    clients = [threading.Thread(target=keep_requesting, daemon=True) for _ in range(6)]
    for client in clients:
        client.start()
    deadline = time.monotonic() + timeout
    while len(answered) < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(answered) >= 20, f"only {len(answered)} pages answered within {timeout:.0f} s"
    child.process.send_signal(signal.SIGTERM)
    _, stderr = child.process.communicate(timeout=timeout)
    stop_clients.set()
    for client in clients:
        client.join(timeout)
    assert child.process.returncode == 0, f"exit {child.process.returncode}; stderr:\n{stderr}"
    assert "stopped on SIGTERM" in stderr, stderr
    assert "Traceback" not in stderr and "Bad file descriptor" not in stderr, stderr


def test_a_body_over_the_limit_is_refused_by_the_server(dashboard):
    timeout = _machine_timeout()
    child = dashboard()
    child.wait_listening(timeout)
    connection = http.client.HTTPConnection("127.0.0.1", child.port, timeout=timeout)
    connection.request(
        "POST",
        "/api/v1/topologies/x/whatif",
        body=b"{" + b" " * MAX_BODY_BYTES + b"}",
        headers={"Content-Type": "application/json"},
    )
    answer = connection.getresponse()
    text = answer.read().decode()
    assert answer.status == 413, answer.status
    assert f"max_body of {MAX_BODY_BYTES}" in text, text  # waitress's answer: the app never ran


def test_the_default_bind_is_loopback_only():
    from scheduler_py.cli import build_parser

    args = build_parser().parse_args(["dashboard"])
    assert args.host == "127.0.0.1"
    assert args.log_level == "INFO"


def test_an_unknown_log_level_is_a_usage_error_naming_the_levels():
    done = subprocess.run(
        [sys.executable, "-m", "scheduler_py.cli", "dashboard", "--log-level", "verbose"],
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done
    assert "DEBUG, INFO, WARNING, ERROR, CRITICAL" in done.stderr and "'verbose'" in done.stderr
