"""Bad input and faults in the aggregation (docs/reliability.md): future-dated records are
refused and counted; ZooKeeper restarting under ``scheduler-py aggregate --every`` costs one
warning line per failed run, never a traceback, and the next run after it returns aggregates
again."""

from __future__ import annotations

import logging
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scheduler_py.devtools.zkserver import LocalZooKeeper, storm_home
from scheduler_py.monitoring.documents import FUTURE_SLACK_MS, parse_windows
from scheduler_py.monitoring.records import encode, record_document
from scheduler_py.monitoring.synthetic import Shape, records
from scheduler_py.monitoring.zk import (
    RECONNECT_MAX_DELAY_S,
    MonitorStore,
    RawWindow,
    close_quietly,
    connect,
    connect_in_background,
)

NOW = 10_000_000


def raw(record):
    name = f"w-{record.window_end_ms}"
    return RawWindow(record.topology_id, record.worker, name, encode(record_document(record)), 0)


def test_a_record_dated_in_the_future_is_refused_and_counted():
    shape = Shape(executors=8, workers=1)
    good = records("t", shape, NOW, 2)
    future = records("t", shape, NOW + FUTURE_SLACK_MS + 10_000, 1)
    cache: dict = {}
    parsed = parse_windows([raw(r) for r in good + future], cache=cache, now_ms=NOW)
    assert len(parsed.records) == 2 and parsed.corrupt["t"] == 1
    assert "in the future" in parsed.reasons["t"][0]
    # once its time has come, the same (cached) record is accepted
    later = parse_windows([raw(r) for r in future], cache=cache, now_ms=NOW + 2 * FUTURE_SLACK_MS)
    assert len(later.records) == 1 and not later.corrupt


def _lines(stream, sink: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        sink.put(line)
    sink.put(None)


def _wait_for(sink: queue.Queue, text: str, seen: list[str], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = sink.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if text in line:
            return line
    raise AssertionError(
        f"waited {timeout:.0f} s for {text!r} in the output of scheduler-py aggregate; got:\n"
        + "".join(seen[-30:])
    )


@pytest.mark.skipif(storm_home() is None, reason="needs the Storm home's ZooKeeper jars")
def test_zookeeper_restart_under_the_every_loop(tmp_path):
    timeout = 120.0 * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    server = LocalZooKeeper(tmp_path / "zk").start()
    root = "/faults"
    topology = "t-faults"
    shape = Shape(executors=16, workers=2)

    def publish(end_ms: int, windows: int) -> None:
        client = connect(server.hosts, timeout=30)
        try:
            store = MonitorStore(client, root)
            for record in records(topology, shape, end_ms, windows, seed=end_ms):
                store.publish_window(record)
        finally:
            close_quietly(client)

    now = int(time.time() * 1000)
    publish(now, 3)
    command = [
        str(Path(sys.executable).with_name("scheduler-py")),
        "aggregate",
        "--every",
        "1s",
        "--zookeeper",
        server.hosts,
        "--zookeeper-timeout",
        "5s",
        "--root",
        root,
        "--no-cleanup",
        "--nice",
        "0",
        "--cpu-weight",
        "0",
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    sink: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(process.stdout, sink), daemon=True).start()
    seen: list[str] = []
    try:
        _wait_for(sink, "aggregated 6 window znode(s) (6 new)", seen, timeout)
        server.stop()
        _wait_for(sink, "aggregation run skipped: ZooKeeper", seen, timeout)
        server.start()
        publish(now + 10_000, 1)
        _wait_for(sink, "new) of 1 topolog(ies)", seen, timeout)
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        finally:
            server.stop()
    output = "".join(seen)
    assert "Traceback" not in output, output


@pytest.mark.skipif(storm_home() is None, reason="needs the Storm home's ZooKeeper jars")
def test_a_store_call_gives_up_when_zookeeper_is_gone(tmp_path):
    """kazoo's synchronous calls wait without limit while the connection is away; every
    MonitorStore call must end with a KazooException instead (the --every loop then logs one
    line and tries again)."""
    from kazoo.exceptions import KazooException

    server = LocalZooKeeper(tmp_path / "zk").start()
    client = connect(server.hosts, timeout=30)
    try:
        store = MonitorStore(client, "/gone", operation_timeout=2.0)
        store.write_aggregate("t", {"topology_id": "t"})
        server.stop()
        for call in (store.topologies, lambda: store.read_aggregate("t")):
            started = time.monotonic()
            with pytest.raises(KazooException):
                call()
            assert time.monotonic() - started < 60
    finally:
        close_quietly(client)
        server.stop()


@pytest.mark.skipif(storm_home() is None, reason="needs the Storm home's ZooKeeper jars")
def test_a_client_keeps_trying_to_reconnect_during_a_long_zookeeper_outage(tmp_path, caplog):
    """kazoo's own reconnection back-off doubles up to an hour: during a 25 s outage it tries
    at 0.1, 0.3, 0.7 … 12.7 s and then not before 25.5 s (it reconnected 17–21 s after
    ZooKeeper was back, measured). Our clients (the brain's cost source, the aggregation, the
    controller's link) try at least every RECONNECT_MAX_DELAY_S, whatever the outage."""
    server = LocalZooKeeper(tmp_path / "zk").start()
    client = connect_in_background(server.hosts)
    try:
        deadline = time.monotonic() + 30
        while not client.connected and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.connected, "no first connection to the local ZooKeeper"
        with caplog.at_level(logging.INFO, logger="kazoo.client"):
            stopped = time.time()
            server.stop()
            time.sleep(25)
            restarting = time.time()
            attempts = [
                r.created
                for r in caplog.records
                if r.getMessage().startswith("Connecting to") and stopped < r.created < restarting
            ]
            server.start()
            back = time.monotonic()
            while not client.connected and time.monotonic() - back < 60:
                time.sleep(0.1)
        assert client.connected, "no reconnection within 60 s of ZooKeeper's restart"
        assert attempts, "no attempt to reconnect while ZooKeeper was down"
        # the gaps between attempts, and from the last one to the restart: kazoo stretches a
        # delay by up to 40 % (its jitter), plus 2 s for a failed attempt on a busy machine
        gaps = [b - a for a, b in zip([stopped, *attempts], [*attempts, restarting], strict=True)]
        assert max(gaps) < RECONNECT_MAX_DELAY_S * 1.4 + 2, [round(g, 1) for g in gaps]
    finally:
        close_quietly(client)
        server.stop()
