"""Unit tests of the word-count ledger reader (tests/cluster/ledger.py); pure, no cluster."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scheduler_py.devtools.ledger import LedgerSummary, ack_latencies, read_ledgers


def _write(path: Path, text: str) -> None:
    path.write_bytes(text.encode())


def test_empty_or_missing_directory(tmp_path: Path) -> None:
    for directory in (tmp_path, tmp_path / "absent"):
        summary = read_ledgers(directory)
        assert summary == LedgerSummary(
            emitted=0, acked=0, failed=0, replays=0, duplicate_acks=0, unacked=frozenset(), files=()
        )
        assert summary.all_acked


def test_counts_across_files(tmp_path: Path) -> None:
    # spout task 7, first process: 3 emitted, one failed and replayed then acked, one lost
    _write(
        tmp_path / "sentences-7-100-1.ledger",
        "E 7-100-1-1\nE 7-100-1-2\nA 7-100-1-1\nE 7-100-1-3\nF 7-100-1-2\nR 7-100-1-2\n"
        "A 7-100-1-2\n",
    )
    # the same task after a restart (new pid/start), one id acked twice
    _write(tmp_path / "sentences-7-200-2.ledger", "E 7-200-2-1\nA 7-200-2-1\nA 7-200-2-1\n")
    _write(tmp_path / "notes.txt", "not a ledger\n")
    s = read_ledgers(tmp_path)
    assert s.files == ("sentences-7-100-1.ledger", "sentences-7-200-2.ledger")
    assert s.emitted == 4
    assert s.acked == 3
    assert s.failed == 1
    assert s.replays == 1
    assert s.duplicate_acks == 1
    assert s.unacked == frozenset({"7-100-1-3"})
    assert s.unacked_by_file == {
        "sentences-7-100-1.ledger": frozenset({"7-100-1-3"}),
        "sentences-7-200-2.ledger": frozenset(),
    }
    assert s.unknown_ids == frozenset()
    assert s.torn_lines == 0
    assert not s.all_acked
    assert "emitted 4" in s.describe()


def test_torn_last_line_is_ignored(tmp_path: Path) -> None:
    _write(tmp_path / "sentences-3-1-1.ledger", "E 3-1-1-1\nA 3-1-1-1\nE 3-1-1-2\nA 3-1")
    s = read_ledgers(tmp_path)
    assert s.torn_lines == 1
    assert s.emitted == 2
    assert s.acked == 1
    assert s.unacked == frozenset({"3-1-1-2"})
    assert s.unknown_ids == frozenset()


def test_ack_without_emit_is_reported(tmp_path: Path) -> None:
    _write(tmp_path / "s-1-1-1.ledger", "A 1-1-1-9\nF 1-1-1-8\n")
    s = read_ledgers(tmp_path)
    assert s.acked == 1
    assert s.emitted == 0
    assert s.unknown_ids == frozenset({"1-1-1-9", "1-1-1-8"})


@pytest.mark.parametrize("bad", ["X 1-1\n", "E\n", "E 1 2x\n", "E 1 2 3\n", "\n"])
def test_malformed_complete_line_raises(tmp_path: Path, bad: str) -> None:
    _write(tmp_path / "s-1-1-1.ledger", "E 1-1-1-1\n" + bad + "A 1-1-1-1\n")
    with pytest.raises(ValueError, match=r"s-1-1-1\.ledger:2"):
        read_ledgers(tmp_path)


def test_summary_is_frozen_and_hashable(tmp_path: Path) -> None:
    _write(tmp_path / "s-1-1-1.ledger", "E 1-1-1-1\n")
    s = read_ledgers(tmp_path)
    with pytest.raises(AttributeError):
        s.emitted = 5  # type: ignore[misc]
    assert hash(s) == hash(read_ledgers(tmp_path))


def test_ack_latencies_from_the_last_emit_before_the_ack(tmp_path: Path) -> None:
    _write(
        tmp_path / "sentences-7-100-1.ledger",
        "E 7-100-1-1 1000000\n"  # emitted at 1 s
        "E 7-100-1-2 1500000\n"
        "A 7-100-1-1 1020000\n"  # acked 20 ms later
        "F 7-100-1-2 31500000\n"
        "R 7-100-1-2 31600000\n"  # the replay: its latency counts from here
        "A 7-100-1-2 31650000\n"
        "E 7-100-1-3 32000000\n",  # never acked: no latency
    )
    _write(tmp_path / "sentences-8-100-1.ledger", "E 8-100-1-1\nA 8-100-1-1\n")  # no times
    assert ack_latencies(tmp_path) == [
        (pytest.approx(1.02), pytest.approx(0.02)),
        (pytest.approx(31.65), pytest.approx(0.05)),
    ]
    # the counts do not care about the times
    assert read_ledgers(tmp_path).acked == 3


@pytest.mark.parametrize("line", ["E 1-1-1-1 12x", "E 1-1-1-1 1 2", "A  5", "E"])
def test_a_line_with_a_bad_time_or_shape_is_refused(tmp_path: Path, line: str) -> None:
    _write(tmp_path / "sentences-1-1-1.ledger", f"{line}\n")
    with pytest.raises(ValueError, match=re.escape("expected '<E|R|A|F> <id> [<microseconds>]'")):
        read_ledgers(tmp_path)
