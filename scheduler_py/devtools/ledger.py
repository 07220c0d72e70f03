"""Read the word-count spout's message-id ledgers (``wordcount.ledger.dir``).

Each spout process appends to ``<dir>/<component>-<task>-<pid>-<start_ns>.ledger`` one line
per event, written with a single unbuffered ``os.write``::

    E <id> [<µs>]    first emit of a sentence
    R <id> [<µs>]    the same id emitted again after a fail (replay)
    A <id> [<µs>]    Storm acked the id
    F <id> [<µs>]    Storm failed the id (a replay follows while the spout process lives)

``<µs>`` is the spout's wall clock in microseconds when it wrote the line (older spouts did
not write it); :func:`ack_latencies` turns it into each tuple tree's complete latency.

Ids are ``<task>-<pid>-<start_ns>-<seq>``, unique across spout restarts.  A killed worker can
leave a torn last line (no trailing newline); it is ignored.  Any other line that does not
parse is a bug and raises ``ValueError``.

When a spout's own worker is restarted, the ids it had in flight can never be acked (the new
process does not know them): they show up in ``unacked`` under the old process's file, see
``LedgerSummary.unacked_by_file``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

LEDGER_SUFFIX = ".ledger"
KINDS = frozenset("ERAF")


@dataclass(frozen=True)
class LedgerSummary:
    """What all ledger files of a directory say.

    ``emitted`` and ``acked`` count distinct ids (the ids themselves are in ``emitted_ids`` and
    ``acked_ids``); ``failed``, ``replays`` and ``duplicate_acks`` count lines (an id acked
    ``n`` times adds ``n - 1`` duplicate acks).
    """

    emitted: int
    acked: int
    failed: int
    replays: int
    duplicate_acks: int
    unacked: frozenset[str]
    files: tuple[str, ...]
    emitted_ids: frozenset[str] = frozenset()
    acked_ids: frozenset[str] = frozenset()
    #: ids acked (or failed/replayed) without an ``E`` line in any file: should stay empty
    unknown_ids: frozenset[str] = frozenset()
    #: torn last lines ignored (at most one per file)
    torn_lines: int = 0
    #: file name -> the ids first emitted in it that were never acked
    unacked_by_file: Mapping[str, frozenset[str]] = field(default_factory=dict, compare=False)

    @property
    def all_acked(self) -> bool:
        """True when every emitted id was acked at least once."""
        return not self.unacked

    def describe(self) -> str:
        """One line for assertion messages."""
        return (
            f"{len(self.files)} ledger file(s): emitted {self.emitted}, acked {self.acked}, "
            f"unacked {len(self.unacked)}, failed {self.failed}, replays {self.replays}, "
            f"duplicate acks {self.duplicate_acks}, unknown ids {len(self.unknown_ids)}, "
            f"torn lines {self.torn_lines}"
        )


def _parse_lines(path: Path) -> tuple[list[tuple[str, str, int | None]], bool]:
    """``(kind, id, µs or None)`` of every line of one file, and whether its last line was
    torn (and dropped)."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn = lines[-1] != b""  # text after the last newline: a partial write
    events = [
        _split_line(raw.decode("utf-8", errors="replace"), path, number)
        for number, raw in enumerate(lines[:-1], start=1)
    ]
    return events, torn


def _ledger_files(directory: str | os.PathLike[str]) -> list[Path]:
    """Every ``*.ledger`` file of ``directory``, sorted (none when it does not exist)."""
    root = Path(directory)
    return sorted(root.glob(f"*{LEDGER_SUFFIX}")) if root.is_dir() else []


def _split_line(text: str, path: Path, number: int) -> tuple[str, str, int | None]:
    """``(kind, id, µs or None)`` of one line; ``ValueError`` naming the line otherwise."""
    parts = text.split(" ")
    if len(parts) in (2, 3) and parts[0] in KINDS and parts[1]:
        if len(parts) == 2:
            return parts[0], parts[1], None
        if parts[2].isdigit():
            return parts[0], parts[1], int(parts[2])
    raise ValueError(
        f"{path}:{number}: not a ledger line (expected '<E|R|A|F> <id> [<microseconds>]'): {text!r}"
    )


def ack_latencies(directory: str | os.PathLike[str]) -> list[tuple[float, float]]:
    """``(acked at, complete latency)`` in seconds of every acked tuple tree whose lines carry
    times, sorted by ack time: from the id's last emit (``E`` or replay ``R``) before its first
    ack to that ack — what Storm calls the complete latency of that try. Ids without times
    (older spouts) or without an emit in the same file are left out."""
    samples: list[tuple[float, float]] = []
    for path in _ledger_files(directory):
        emitted_at: dict[str, int] = {}
        for kind, msg_id, at_us in _parse_lines(path)[0]:
            if at_us is None:
                continue
            if kind in "ER":
                emitted_at[msg_id] = at_us
            elif kind == "A" and msg_id in emitted_at:
                start = emitted_at.pop(msg_id)
                samples.append((at_us / 1e6, max(0, at_us - start) / 1e6))
    samples.sort()
    return samples


def read_ledgers(directory: str | os.PathLike[str]) -> LedgerSummary:
    """Summarise every ``*.ledger`` file in ``directory`` (none, or no directory: all zero)."""
    paths = _ledger_files(directory)
    emitted: set[str] = set()
    ack_counts: Counter[str] = Counter()
    seen_other: set[str] = set()  # ids in R/F lines
    emitted_in: dict[str, list[str]] = {}
    failed = replays = torn_lines = 0
    for path in paths:
        events, torn = _parse_lines(path)
        torn_lines += int(torn)
        mine = emitted_in.setdefault(path.name, [])
        for kind, msg_id, _ in events:
            if kind == "E":
                if msg_id not in emitted:
                    mine.append(msg_id)
                emitted.add(msg_id)
            elif kind == "A":
                ack_counts[msg_id] += 1
            elif kind == "F":
                failed += 1
                seen_other.add(msg_id)
            else:  # "R"
                replays += 1
                seen_other.add(msg_id)
    acked_ids = frozenset(ack_counts)
    unacked = frozenset(emitted - acked_ids)
    return LedgerSummary(
        emitted=len(emitted),
        acked=len(acked_ids),
        failed=failed,
        replays=replays,
        duplicate_acks=sum(n - 1 for n in ack_counts.values()),
        unacked=unacked,
        files=tuple(p.name for p in paths),
        emitted_ids=frozenset(emitted),
        acked_ids=acked_ids,
        unknown_ids=frozenset((acked_ids | seen_other) - emitted),
        torn_lines=torn_lines,
        unacked_by_file={
            name: frozenset(i for i in ids if i in unacked) for name, ids in emitted_in.items()
        },
    )
