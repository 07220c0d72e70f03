"""Word count's runtime knobs (topologies/wordcount/src/knobs.py) and their use by the spout
and the split bolt; pure, no cluster."""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import time
from pathlib import Path

import pytest

from scheduler_py.devtools.ledger import read_ledgers

SRC = Path(__file__).resolve().parents[1] / "topologies" / "wordcount" / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

import knobs  # noqa: E402


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _write_json(path: Path, data: object, mtime_ns: int) -> None:
    path.write_text(json.dumps(data))
    os.utime(path, ns=(mtime_ns, mtime_ns))  # an explicit mtime: no reliance on fs granularity


# --- conf values -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(50, 50.0), (0.5, 0.5), ("50", 50.0), (" 2.5 ", 2.5), (None, 7.0), (True, 7.0),
     ("fast", 7.0), (-1, 7.0), ("nan", 7.0), (0, 0.0)],
)  # fmt: skip
def test_conf_float_accepts_what_sparse_o_produces(value: object, expected: float) -> None:
    assert knobs.conf_float({"k": value}, "k", 7.0) == expected
    assert knobs.conf_float({}, "k", 7.0) == 7.0


def test_conf_path() -> None:
    assert knobs.conf_path({"k": "/tmp/x/control.json"}, "k") == "/tmp/x/control.json"
    assert knobs.conf_path({"k": None}, "k") is None
    assert knobs.conf_path({"k": "  "}, "k") is None
    assert knobs.conf_path({}, "k") is None


# --- control file ----------------------------------------------------------------------------


def test_control_without_path_is_the_defaults() -> None:
    control = knobs.ControlFile(None, {"interval_ms": 20.0})
    assert control.values() == {"interval_ms": 20.0}
    assert not control.poll(force=True)


def test_control_reloads_on_mtime_change_at_most_once_per_check(tmp_path: Path) -> None:
    path = tmp_path / "control.json"
    _write_json(path, {"interval_ms": 5}, 1_000_000_000)
    clock = FakeClock()
    control = knobs.ControlFile(path, {"interval_ms": 20.0, "split_cpu_ms": 0.0}, clock=clock)
    assert control.values() == {"interval_ms": 5.0, "split_cpu_ms": 0.0}
    assert control.reloads == 1

    # same size, new mtime, but within the check period: not seen yet
    _write_json(path, {"interval_ms": 6}, 2_000_000_000)
    clock.now += 0.5
    assert control.get("interval_ms") == 5.0
    clock.now += 0.6
    assert control.get("interval_ms") == 6.0
    assert control.reloads == 2

    # unchanged file: stat only, no re-read
    clock.now += 5
    assert not control.poll()
    assert control.reloads == 2

    # a key left out takes its default again; unknown keys are ignored
    _write_json(path, {"split_cpu_ms": "2.5", "other": [1]}, 3_000_000_000)
    clock.now += 1
    assert control.values() == {"interval_ms": 20.0, "split_cpu_ms": 2.5}


@pytest.mark.parametrize(
    "content",
    ["{not json", "[1, 2]", '{"interval_ms": -1}', '{"interval_ms": "x"}', '{"interval_ms": true}',
     '{"split_cpu_ms": null}', '{"interval_ms": NaN}'],
)  # fmt: skip
def test_invalid_file_keeps_old_values_and_logs_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: str
) -> None:
    path = tmp_path / "control.json"
    _write_json(path, {"interval_ms": 5}, 1_000_000_000)
    clock = FakeClock()
    control = knobs.ControlFile(path, {"interval_ms": 20.0}, clock=clock)
    assert control.get("interval_ms") == 5.0

    path.write_text(content)
    os.utime(path, ns=(2_000_000_000, 2_000_000_000))
    with caplog.at_level(logging.WARNING, logger="knobs"):
        for _ in range(3):
            clock.now += 1.1
            assert control.get("interval_ms") == 5.0
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "invalid" in warnings[0].getMessage()

    # fixed: read again
    _write_json(path, {"interval_ms": 8}, 3_000_000_000)
    clock.now += 1.1
    assert control.get("interval_ms") == 8.0


def test_missing_file_keeps_values_logs_once_and_recovers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "control.json"
    clock = FakeClock()
    with caplog.at_level(logging.WARNING, logger="knobs"):
        control = knobs.ControlFile(path, {"interval_ms": 20.0}, clock=clock)
        for _ in range(3):
            assert control.get("interval_ms") == 20.0
            clock.now += 1.1
    assert len(caplog.records) == 1
    assert "cannot stat" in caplog.records[0].getMessage()

    _write_json(path, {"interval_ms": 1}, 1_000_000_000)
    assert control.get("interval_ms") == 1.0
    path.unlink()  # removed later: keep the last values
    clock.now += 1.1
    assert control.get("interval_ms") == 1.0


# --- CPU burner ------------------------------------------------------------------------------


def test_burn_cpu_consumes_the_requested_process_time() -> None:
    assert knobs.burn_cpu(0) == 0
    assert knobs.burn_cpu(-5) == 0
    start = time.process_time()
    rounds = knobs.burn_cpu(50)
    used = time.process_time() - start
    assert rounds > 0
    assert 0.8 * 0.050 <= used < 0.5, used


# --- ledger ----------------------------------------------------------------------------------


def test_ledger_line_format() -> None:
    msg_id = knobs.message_id(7, 1234, 1_700_000_000_000_000_000, 42)
    assert msg_id == "7-1234-1700000000000000000-42"
    assert knobs.ledger_line("E", msg_id) == b"E 7-1234-1700000000000000000-42\n"
    for kind in "RAF":
        assert knobs.ledger_line(kind, "x") == f"{kind} x\n".encode()
    for kind in ("X", "", "EA"):
        with pytest.raises(ValueError):
            knobs.ledger_line(kind, "x")
    for bad_id in ("", "a b", "a\nb"):
        with pytest.raises(ValueError):
            knobs.ledger_line("E", bad_id)
    assert knobs.ledger_line("A", "x", 1_795_000_000_123_456) == b"A x 1795000000123456\n"
    assert knobs.ledger_file_name("sentences", 7, 1234, 99) == "sentences-7-1234-99.ledger"


def test_ledger_lines_are_on_disk_before_close(tmp_path: Path) -> None:
    directory = tmp_path / "ledgers" / "sub"  # created on demand
    ledger = knobs.Ledger(directory, "sentences", 7, 1234, 99)
    assert Path(ledger.path).name == "sentences-7-1234-99.ledger"
    before_us = time.time_ns() // 1000
    ledger.record("E", "7-1234-99-1")
    ledger.record("A", "7-1234-99-1")
    ledger.record("E", "7-1234-99-2")
    after_us = time.time_ns() // 1000
    # read while still open (as after a SIGKILL): nothing buffered in the process
    lines = [line.split(" ") for line in Path(ledger.path).read_text().splitlines()]
    assert [(kind, msg_id) for kind, msg_id, _ in lines] == [
        ("E", "7-1234-99-1"),
        ("A", "7-1234-99-1"),
        ("E", "7-1234-99-2"),
    ]
    stamps = [int(at) for _, _, at in lines]
    assert before_us <= stamps[0] <= stamps[1] <= stamps[2] <= after_us
    summary = read_ledgers(directory)
    assert (summary.emitted, summary.acked, summary.unacked) == (2, 1, frozenset({"7-1234-99-2"}))
    ledger.close()
    ledger.close()
    with pytest.raises(ValueError):
        ledger.record("A", "7-1234-99-2")


# --- the components --------------------------------------------------------------------------


def _component(cls: type, conf: dict, context: dict, emitted: list) -> object:
    comp = cls(input_stream=io.BytesIO(), output_stream=io.BytesIO(), rdb_signal=None)
    comp.logger = logging.getLogger("knobs.test")
    comp.emit = lambda values, **kw: emitted.append((values, kw.get("tup_id")))
    comp.initialize(conf, context)
    return comp


def test_spout_records_emit_fail_replay_ack(tmp_path: Path) -> None:
    pytest.importorskip("streamparse")
    from spouts.words import SentenceSpout

    emitted: list = []
    conf = {"wordcount.ledger.dir": str(tmp_path), "wordcount.spout.interval.ms": 0}
    spout = _component(SentenceSpout, conf, {"taskid": 7, "componentid": "sentences"}, emitted)
    spout.next_tuple()
    spout.next_tuple()
    (first, id1), (_, id2) = emitted
    assert id1.startswith(f"7-{os.getpid()}-") and id1.endswith("-1")
    spout.fail(id1)
    assert emitted[-1] == (first, id1)  # replayed under the same id
    spout.ack(id1)
    summary = read_ledgers(tmp_path)
    assert summary.files == (f"sentences-7-{spout.pid}-{spout.start_ns}.ledger",)
    assert (summary.emitted, summary.acked, summary.failed, summary.replays) == (2, 1, 1, 1)
    assert summary.unacked == frozenset({id2})
    lines = Path(tmp_path, summary.files[0]).read_text().splitlines()
    events = [line.rsplit(" ", 1)[0] for line in lines]  # without the time (µs)
    assert events == [f"E {id1}", f"E {id2}", f"F {id1}", f"R {id1}", f"A {id1}"]


def test_spout_interval_from_control_file(tmp_path: Path) -> None:
    pytest.importorskip("streamparse")
    from spouts.words import SentenceSpout

    control = tmp_path / "control.json"
    _write_json(control, {"interval_ms": 100_000}, 1_000_000_000)
    emitted: list = []
    conf = {"wordcount.control.file": str(control), "wordcount.spout.interval.ms": "0"}
    spout = _component(SentenceSpout, conf, {"taskid": 1}, emitted)
    assert spout.ledger is None
    spout.next_tuple()  # the first sentence is due at once
    start = time.monotonic()
    spout.next_tuple()  # the next is 100 s away: one short sleep, no emit
    assert time.monotonic() - start < 0.5
    assert len(emitted) == 1
    _write_json(control, {"interval_ms": 0}, 2_000_000_000)
    spout.control.poll(force=True)
    spout.next_tuple()
    assert len(emitted) == 2


def test_split_bolt_burns_the_configured_cpu() -> None:
    pytest.importorskip("streamparse")
    from bolts.split import SplitSentenceBolt

    class Tup:
        values = ("the cow jumped",)

    emitted: list = []
    bolt = _component(SplitSentenceBolt, {"wordcount.split.cpu.ms": 30}, {"taskid": 2}, emitted)
    start = time.process_time()
    bolt.process(Tup())
    assert time.process_time() - start >= 0.8 * 0.030
    assert [v for v, _ in emitted] == [["the"], ["cow"], ["jumped"]]
