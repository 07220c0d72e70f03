"""The Thrift port's resource bounds (scheduler_py/service/bounded.py) against real sockets:
a 2 GB (and a 1 GB) frame header, a peer that sends one byte at a time, more connections
than the cap, a single byte that must not switch the garbage collector off, accept errors."""

from __future__ import annotations

import gc
import logging
import socket
import time
from pathlib import Path

import pytest

from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.bounded import AcceptBackoff, Bounds
from scheduler_py.service.client import brain_client
from scheduler_py.service.server import BrainHandler
from tests.brain_server import port_of, serve_brain

SERVER_LOG = "scheduler_py.service"


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` within ``within`` seconds (reads until EOF)."""
    sock.settimeout(within)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            if not sock.recv(4096):
                return True
    except (TimeoutError, ConnectionResetError):
        return False
    return False


@pytest.fixture
def served():
    started = []

    def serve(**options):
        handler = BrainHandler(RoundConfig("even"))
        server, address = serve_brain(handler, **options)
        started.append((server, handler))
        client = brain_client(address, timeout_ms=10_000)  # accepted after serve_brain's probe
        client.ping()
        client.close()
        deadline = time.monotonic() + 10  # both have let go of their slots
        while server.slots.in_use:
            assert time.monotonic() < deadline, "the probe connection was never closed"
            time.sleep(0.01)
        return address

    yield serve
    for server, handler in started:
        server.close()
        handler.close()


def _virtual_mb() -> int:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmSize:")[1].split()[0]) // 1024


@pytest.mark.parametrize("announced", [2**31 - 1, 2**30], ids=["2GB", "1GB"])
def test_a_frame_header_announcing_gigabytes_is_refused_without_reserving_them(
    served, caplog, announced
):
    """Before: the framed transport reserved the announced size (a 1 GB header grew the
    process by ~3 GB of virtual memory) and waited for the bytes."""
    address = served(client_timeout_ms=20_000)
    before = _virtual_mb()
    with (
        caplog.at_level(logging.WARNING, logger=SERVER_LOG),
        socket.create_connection(("127.0.0.1", port_of(address))) as sock,
    ):
        sock.sendall(announced.to_bytes(4, "big") + b"\x80\x01\x00\x01")
        assert _closed_by_server(sock, 5), "a gigabyte frame header kept the connection open"
    assert f"announces {announced} bytes" in caplog.text
    assert _virtual_mb() - before < 512, f"virtual memory grew {_virtual_mb() - before} MB"


def test_a_peer_sending_one_byte_at_a_time_is_dropped_at_the_call_deadline(served, caplog):
    address = served(client_timeout_ms=20_000, bounds=Bounds(call_deadline_secs=1.0))
    with (
        caplog.at_level(logging.WARNING, logger=SERVER_LOG),
        socket.create_connection(("127.0.0.1", port_of(address))) as sock,
    ):
        sock.sendall((1000).to_bytes(4, "big"))
        started = time.monotonic()
        closed = False
        while not closed and time.monotonic() - started < 8:  # each byte within the idle timeout
            try:
                sock.sendall(b"\x00")
            except (BrokenPipeError, ConnectionResetError):
                closed = True
            time.sleep(0.2)
        closed = closed or _closed_by_server(sock, 1)
        assert closed, "a byte every 0.2 s held the connection past the 1 s call deadline"
        assert time.monotonic() - started < 5
    assert "not complete 1 s after its first byte" in caplog.text


def test_one_byte_from_a_peer_does_not_switch_the_collector_off(served):
    address = served(client_timeout_ms=20_000)
    assert gc.isenabled()
    with socket.create_connection(("127.0.0.1", port_of(address))) as sock:
        sock.sendall(b"\x00")
        time.sleep(0.3)  # the server has read it
        assert gc.isenabled(), "a partial request disabled the garbage collector"
    client = brain_client(address, timeout_ms=10_000)
    try:
        assert client.ping()
    finally:
        client.close()
    deadline = time.monotonic() + 5  # the server turns it back on once its answer is out
    while not gc.isenabled():
        assert time.monotonic() < deadline, "the collector stayed off after a complete call"
        time.sleep(0.01)


def test_connections_beyond_the_cap_are_closed_with_one_warning(served, caplog):
    address = served(client_timeout_ms=20_000, bounds=Bounds(max_connections=2))
    port = port_of(address)
    with caplog.at_level(logging.INFO, logger=SERVER_LOG):
        held = [brain_client(address, timeout_ms=10_000) for _ in range(2)]
        for client in held:
            assert client.ping()
        extra = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        for sock in extra:
            assert _closed_by_server(sock, 5), "a connection beyond the cap was kept"
            sock.close()
        warnings = [r for r in caplog.records if "the most this brain serves" in r.getMessage()]
        assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
        held.pop().close()
        deadline = time.monotonic() + 10
        while "connection slot is free again; 3" not in caplog.text:
            assert time.monotonic() < deadline, "the freed slot was not logged"
            time.sleep(0.05)
        again = brain_client(address, timeout_ms=10_000)
        try:
            assert again.ping()
        finally:
            again.close()
            held[0].close()


def test_accept_errors_back_off_with_one_warning_per_streak(caplog):
    sleeps: list[float] = []
    backoff = AcceptBackoff(sleep=sleeps.append)
    with caplog.at_level(logging.DEBUG, logger=SERVER_LOG):
        for _ in range(8):
            backoff.failed(OSError(24, "Too many open files"))
        backoff.succeeded()
    assert sleeps == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "Too many open files" in warnings[0].getMessage()
    assert "accepting connections again after 8 failure(s)" in caplog.text
