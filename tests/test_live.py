"""Live counters (contract ``docs/monitoring-format.md`` §5): parsing, the drain check, and
reading the ephemeral znodes back from a real ZooKeeper (started here from the Storm home's
jars; skipped without one)."""

from __future__ import annotations

import gzip
import json
import logging
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from kazoo.exceptions import NoNodeError

from scheduler_py.devtools.zkserver import LocalZooKeeper
from scheduler_py.monitoring.live import live_path, parse_live, read_live
from scheduler_py.monitoring.zk import connect
from scheduler_py.reconfig.drain import DrainCheck, check_drain
from scheduler_py.scheduling.interfaces import LiveTask, LiveWorker

# Exactly what LiveCountersTest.recordJsonShape (Java) expects the worker to write.
JAVA_DOCUMENT = (
    '{"v": 1, "topology_id": "wc-1-2", "supervisor_id": "sup-a", "host": "127.0.0.2", '
    '"port": 6700, "ts_ms": 1795250712345, "started_ms": 1795250700000, "seq": 17, "tasks": ['
    '{"task": 1, "component": "__acker", "spout": false, "emitted": 0, "executed": 0, '
    '"acked": 0, "failed": 0, "ack_init": 0, "pending": 0}, '
    '{"task": 4, "component": "sp\\"lit", "spout": false, "emitted": 0, "executed": 1, '
    '"acked": 0, "failed": 0, "ack_init": 0, "pending": 0}, '
    '{"task": 9, "component": "sentences", "spout": true, "emitted": 1, "executed": 0, '
    '"acked": 1, "failed": 0, "ack_init": 2, "pending": 1}]}'
)


def task_doc(task: int = 4, component: str = "split", spout: bool = False, **counts: int):
    doc: dict[str, Any] = {"task": task, "component": component, "spout": spout}
    for name in ("emitted", "executed", "acked", "failed", "ack_init", "pending"):
        doc[name] = counts.get(name, 0)
    return doc


def worker_doc(sup: str = "sup-a", port: int = 6700, tasks=None, **fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "v": 1,
        "topology_id": "wc-1-2",
        "supervisor_id": sup,
        "host": "127.0.0.2",
        "port": port,
        "ts_ms": 2_000,
        "started_ms": 1_000,
        "seq": 1,
        "tasks": [task_doc()] if tasks is None else tasks,
    }
    doc.update(fields)
    return doc


def encode(doc: Any) -> bytes:
    return json.dumps(doc).encode("utf-8")


def worker(
    sup: str = "sup-a",
    port: int = 6700,
    ts_ms: int = 2_000,
    started_ms: int = 1_000,
    emitted: int = 0,
    pending: int = 0,
) -> LiveWorker:
    tasks = (
        LiveTask(9, "sentences", True, emitted, 0, 0, 0, pending, pending),
        LiveTask(4, "split", False, 0, emitted, emitted, 0, 0),
    )
    return LiveWorker(sup, "127.0.0.2", port, ts_ms, started_ms, 1, tasks)


def poll(*workers: LiveWorker) -> dict[str, LiveWorker]:
    return {w.key: w for w in workers}


# -- parsing ------------------------------------------------------------------------------


def test_parses_the_java_document() -> None:
    w = parse_live(JAVA_DOCUMENT.encode("utf-8"))
    assert (w.supervisor_id, w.host, w.port, w.topology_id) == (
        "sup-a",
        "127.0.0.2",
        6700,
        "wc-1-2",
    )
    assert (w.ts_ms, w.started_ms, w.seq) == (1795250712345, 1795250700000, 17)
    assert w.key == "sup-a:6700"
    assert [t.task for t in w.tasks] == [1, 4, 9]
    assert w.tasks[1] == LiveTask(4, 'sp"lit', False, 0, 1, 0, 0, 0, 0)
    assert w.tasks[2] == LiveTask(9, "sentences", True, 1, 0, 1, 0, 1, 2)
    assert w.pending == 1
    assert w.activity == 1 + 1 + 1


def test_worker_sums_and_extra_fields() -> None:
    doc = worker_doc(
        tasks=[
            task_doc(2, "sentences", True, emitted=10, acked=7, failed=1, ack_init=10, pending=2),
            task_doc(-1, "__system"),
            task_doc(3, "split", emitted=30, executed=10, acked=9, failed=1, future=5),
        ],
        newer_field={"x": 1},
    )
    w = parse_live(encode(doc))
    assert [t.task for t in w.tasks] == [-1, 2, 3], "sorted by task, negative ids allowed"
    assert w.pending == 2
    assert w.activity == (10 + 7 + 1) + (30 + 10 + 9 + 1)
    assert w.tasks[1].is_spout and not w.tasks[2].is_spout
    assert w.supervisor_thrift_port is None  # optional: older monitors do not publish it


def test_supervisor_thrift_port_is_read_when_published() -> None:
    w = parse_live(encode(worker_doc(supervisor_thrift_port=6628)))
    assert w.supervisor_thrift_port == 6628


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (gzip.compress(b'{"v": 1}'), "gzip"),
        (b"\xff\xfe{", "not UTF-8"),
        (b'{"v": 1, ', "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (encode(worker_doc(v=2)), "unsupported live counters version 2"),
        (encode(worker_doc(v=True)), "unsupported live counters version True"),
        (encode({k: v for k, v in worker_doc().items() if k != "v"}), "missing field 'v'"),
        (encode({k: v for k, v in worker_doc().items() if k != "ts_ms"}), "missing field 'ts_ms'"),
        (encode(worker_doc(port="6700")), "'port' must be an integer"),
        (encode(worker_doc(seq=1.5)), "'seq' must be an integer"),
        (encode(worker_doc(started_ms=-1)), "'started_ms' must be >= 0"),
        (encode(worker_doc(supervisor_id="")), "empty 'supervisor_id'"),
        (encode(worker_doc(host=None)), "'host' must be a string"),
        (encode(worker_doc(tasks={"4": {}})), "'tasks' must be a list"),
        (encode(worker_doc(supervisor_thrift_port=0)), "'supervisor_thrift_port' must be >= 1"),
        (encode(worker_doc(supervisor_thrift_port=70000)), "must be a TCP port (1-65535)"),
        (encode(worker_doc(supervisor_thrift_port="6628")), "must be an integer"),
        (encode(worker_doc(tasks=[7])), "tasks[0]: must be an object"),
        (encode(worker_doc(tasks=[task_doc(emitted=-3)])), "tasks[0]: 'emitted' must be >= 0"),
        (encode(worker_doc(tasks=[task_doc(acked=True)])), "tasks[0]: 'acked' must be an integer"),
        (encode(worker_doc(tasks=[task_doc(spout=1)])), "tasks[0]: 'spout' must be true or false"),
        (encode(worker_doc(tasks=[task_doc(), task_doc()])), "duplicate task ids [4]"),
        (
            encode(worker_doc(tasks=[{k: v for k, v in task_doc().items() if k != "pending"}])),
            "tasks[0]: missing field 'pending'",
        ),
    ],
)
def test_corrupt_data_is_refused_with_a_reason(data: bytes, message: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_live(data)
    assert message in str(error.value)


def test_live_path() -> None:
    assert live_path("wc-1-2") == "/scheduler-py/live/wc-1-2"
    assert live_path("t", root="/x/y/") == "/x/y/live/t"
    assert live_path(root="x") == "/x/live"


# -- the drain check ----------------------------------------------------------------------


def test_drained_when_quiet_fresh_and_nothing_pending() -> None:
    before = poll(worker("a", emitted=50, ts_ms=1_000), worker("b", emitted=7, ts_ms=1_000))
    after = poll(worker("a", emitted=50, ts_ms=2_000), worker("b", emitted=7, ts_ms=2_001))
    check = check_drain(before, after)
    assert check == DrainCheck(
        True,
        0,
        0,
        2,
        (),
        (),
        "drained: nothing pending, nothing moved since last poll on 2 workers",
    )
    assert check_drain(before, after, expected=["a:6700"]).drained


def test_first_poll_is_never_drained() -> None:
    check = check_drain(None, poll(worker("a", pending=3)), expected=["a:6700", "b:6700"])
    assert not check.drained
    assert (check.pending, check.moved, check.workers, check.missing) == (3, 0, 1, ("b:6700",))
    assert check.detail.startswith("first poll")
    assert "pending 3 tuple trees" in check.detail


def test_pending_tuple_trees_block_the_drain() -> None:
    before = poll(worker("a", pending=1, ts_ms=1_000))
    after = poll(worker("a", pending=1, ts_ms=2_000))
    check = check_drain(before, after)
    assert not check.drained
    assert (check.pending, check.moved) == (1, 0)
    assert check.detail == "pending 1 tuple tree"


def test_moving_tuples_block_the_drain_even_when_nothing_is_pending() -> None:
    # unanchored tuples: no tree to wait for, only activity
    before = poll(worker("a", emitted=100, ts_ms=1_000), worker("b", emitted=5, ts_ms=1_000))
    after = poll(worker("a", emitted=270, ts_ms=2_000), worker("b", emitted=5, ts_ms=2_000))
    check = check_drain(before, after)
    assert not check.drained
    assert check.moved == 3 * 170  # a's spout emitted 170, its split executed and acked 170
    assert check.detail == "510 tuples moved since last poll"


def test_missing_workers_block_the_drain() -> None:
    a1, a2 = worker("a", ts_ms=1_000), worker("a", ts_ms=2_000)
    b1 = worker("b", ts_ms=1_000)
    check = check_drain(poll(a1, b1), poll(a2))  # b's znode is gone
    assert not check.drained
    assert check.missing == ("b:6700",)
    assert check.detail == "missing worker b:6700"
    # expected but absent from the previous poll: cannot compare it
    check = check_drain(poll(a1), poll(a2, worker("b", ts_ms=2_000)), expected=["a:6700", "b:6700"])
    assert not check.drained
    assert check.missing == ("b:6700",)
    # a worker that is not expected may go away
    assert check_drain(poll(a1, b1), poll(a2), expected=["a:6700"]).drained


def test_stale_workers_block_the_drain() -> None:
    before = poll(worker("a", ts_ms=1_000), worker("b", ts_ms=1_000))
    after = poll(worker("a", ts_ms=2_000), worker("b", ts_ms=1_000))  # b's monitor stopped writing
    check = check_drain(before, after)
    assert not check.drained
    assert (check.stale, check.missing, check.moved, check.pending) == (("b:6700",), (), 0, 0)
    assert check.detail == "stale worker b:6700"


def test_a_restarted_worker_counts_as_moved() -> None:
    before = poll(worker("a", ts_ms=1_000, started_ms=500, emitted=90))
    restarted = poll(worker("a", ts_ms=2_000, started_ms=1_800, emitted=0))
    check = check_drain(before, restarted)
    assert not check.drained
    assert check.moved == 1, "counters back at zero still mean the worker changed"
    busy = poll(worker("a", ts_ms=2_000, started_ms=1_800, emitted=4))
    assert check_drain(before, busy).moved == 12


def test_a_new_worker_counts_with_all_its_activity() -> None:
    before = poll(worker("a", ts_ms=1_000))
    after = poll(worker("a", ts_ms=2_000), worker("c", ts_ms=2_000, emitted=2))
    check = check_drain(before, after)
    assert (check.drained, check.moved, check.workers) == (False, 6, 2)
    quiet_newcomer = poll(worker("a", ts_ms=2_000), worker("c", ts_ms=2_000))
    assert check_drain(before, quiet_newcomer).drained


def test_no_counters_at_all_is_not_a_drain() -> None:
    check = check_drain({}, {})
    assert not check.drained
    assert check.workers == 0
    assert "no live counters published" in check.detail


def test_detail_lists_every_reason() -> None:
    before = poll(worker("a", ts_ms=1_000), worker("b", ts_ms=1_000), worker("c", ts_ms=1_000))
    after = poll(worker("a", ts_ms=2_000, pending=12, emitted=100), worker("b", ts_ms=1_000))
    check = check_drain(before, after)
    assert check.detail == (
        "pending 12 tuple trees, 300 tuples moved since last poll, missing worker c:6700, "
        "stale worker b:6700"
    )


# -- reading from ZooKeeper ---------------------------------------------------------------


class _Result:
    def __init__(self, value: Any = None, error: Exception | None = None) -> None:
        self.value, self.error = value, error

    def get(self, timeout: float | None = None) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


class FakeClient:
    """An in-memory ZooKeeper: just the kazoo calls ``read_live`` and ``MonitorStore``'s
    readers make (znodes by path; ``None``: vanished between listing and reading)."""

    def __init__(self, nodes: dict[str, bytes | None]) -> None:
        self.nodes = nodes

    def get_children_async(self, path: str) -> _Result:
        prefix = path + "/"
        children = sorted(
            {p[len(prefix) :].split("/")[0] for p in self.nodes if p.startswith(prefix)}
        )
        if not children and path not in self.nodes:
            return _Result(error=NoNodeError(path))
        return _Result(children)

    def get_async(self, path: str) -> _Result:
        data = self.nodes.get(path)
        return _Result(error=NoNodeError(path)) if data is None else _Result((data, _STAT))


_STAT = SimpleNamespace(mtime=0, ctime=0)
"""the parts of a kazoo ``ZnodeStat`` the readers use"""


def _ours(caplog: pytest.LogCaptureFixture) -> list[str]:
    """This module's warnings (kazoo logs its own connection hiccups at WARNING too)."""
    return [r.getMessage() for r in caplog.records if r.name == "scheduler_py.monitoring.live"]


def test_read_live_without_a_server(caplog: pytest.LogCaptureFixture) -> None:
    base = f"/r-{uuid.uuid4().hex[:8]}/live/t"
    client = FakeClient(
        {
            f"{base}/sup-a:6700": encode(worker_doc("sup-a", 6700)),
            f"{base}/sup-b:6701": b"{broken",
            f"{base}/sup-c:6702": None,  # vanished between listing and reading
            f"{base}/sup-d:6703": encode(worker_doc("sup-x", 6703)),  # not this znode's worker
        }
    )
    root = base.removesuffix("/live/t")
    with caplog.at_level(logging.WARNING, logger="scheduler_py.monitoring.live"):
        workers = read_live(client, "t", root=root)
    assert list(workers) == ["sup-a:6700"]
    warnings = _ours(caplog)
    assert len(warnings) == 2
    assert "sup-b:6701" in warnings[0] and "not JSON" in warnings[0]
    assert "sup-d:6703" in warnings[1] and "'sup-x:6703'" in warnings[1]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="scheduler_py.monitoring.live"):
        read_live(client, "t", root=root)
    assert _ours(caplog) == [], "the same problem is logged once"
    assert read_live(client, "other", root=root) == {}


def test_kazoo_round_trip(zookeeper: LocalZooKeeper, caplog: pytest.LogCaptureFixture) -> None:
    root = f"/test-{uuid.uuid4().hex[:8]}"
    reader = connect(zookeeper.hosts)
    worker_client = connect(zookeeper.hosts)  # plays the workers: its session owns the znodes
    try:
        assert read_live(reader, "wc-1-2", root=root) == {}, "no topology path yet"
        base = live_path("wc-1-2", root)
        worker_client.create(
            f"{base}/sup-a:6700", JAVA_DOCUMENT.encode("utf-8"), ephemeral=True, makepath=True
        )
        worker_client.create(
            f"{base}/sup-b:6701",
            encode(worker_doc("sup-b", 6701, tasks=[task_doc(3, "split", executed=4)])),
            ephemeral=True,
        )
        worker_client.create(f"{base}/sup-c:6702", b"\x1f\x8b gzip", ephemeral=True)
        with caplog.at_level(logging.WARNING, logger="scheduler_py.monitoring.live"):
            first = read_live(reader, "wc-1-2", root=root)
        assert sorted(first) == ["sup-a:6700", "sup-b:6701"]
        assert first["sup-a:6700"].pending == 1
        assert first["sup-b:6701"].activity == 4
        assert _ours(caplog) == [
            f"ignoring live counters {base}/sup-c:6702: gzip data: a live znode holds plain "
            "UTF-8 JSON"
        ]

        # the workers rewrite their znodes: a quiet poll → drained
        doc_a = json.loads(JAVA_DOCUMENT)
        doc_a.update(ts_ms=doc_a["ts_ms"] + 1000, seq=18)
        doc_a["tasks"][2].update(acked=2, pending=0)  # the last tree was acked
        worker_client.set(f"{base}/sup-a:6700", encode(doc_a))
        worker_client.set(
            f"{base}/sup-b:6701",
            encode(
                worker_doc("sup-b", 6701, ts_ms=3_000, tasks=[task_doc(3, "split", executed=4)])
            ),
        )
        worker_client.delete(f"{base}/sup-c:6702")
        second = read_live(reader, "wc-1-2", root=root)
        check = check_drain(first, second)
        assert (check.drained, check.pending, check.moved) == (False, 0, 1), check.detail
        doc_a.update(ts_ms=doc_a["ts_ms"] + 1000, seq=19)
        worker_client.set(f"{base}/sup-a:6700", encode(doc_a))
        worker_client.set(
            f"{base}/sup-b:6701",
            encode(
                worker_doc("sup-b", 6701, ts_ms=4_000, tasks=[task_doc(3, "split", executed=4)])
            ),
        )
        third = read_live(reader, "wc-1-2", root=root)
        assert check_drain(second, third).drained

        # the workers' sessions end: their ephemeral znodes go with them
        worker_client.stop()
        worker_client.close()
        assert read_live(reader, "wc-1-2", root=root) == {}
        assert not check_drain(third, {}).drained
    finally:
        if worker_client.connected:
            worker_client.stop()
            worker_client.close()
        reader.stop()
        reader.close()
