"""Small pure helpers of the word count: runtime load control, a CPU burner, a message-id ledger.

Shipped in the topology jar next to ``spouts/`` and ``bolts/`` (everything under ``src/`` goes
to ``resources/``, which ``streamparse_run`` puts on ``sys.path`` in the worker), so the
components ``import knobs``.  No streamparse import here: the tests load this module by path.

- :class:`ControlFile` re-reads a JSON object file (``wordcount.control.file``) at most once
  per ``check_every`` seconds when its mtime/size/inode changed; a missing, unreadable or
  invalid file keeps the previous values and is logged once.
- :func:`burn_cpu` hashes until ``time.process_time()`` advanced by the requested ms, so the
  CPU time consumed is what the knob says however contended the machine is.
- :class:`Ledger` appends ``E|R|A|F <id>`` lines with one unbuffered ``os.write`` each, so a
  killed worker loses no written line (``tests/cluster/ledger.py`` reads them).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

CONTROL_FILE_KEY = "wordcount.control.file"
LEDGER_DIR_KEY = "wordcount.ledger.dir"
SPOUT_INTERVAL_KEY = "wordcount.spout.interval.ms"
SPLIT_CPU_KEY = "wordcount.split.cpu.ms"

#: the control file's keys, each a number >= 0 (milliseconds)
CONTROL_KEYS = ("interval_ms", "split_cpu_ms")

LEDGER_KINDS = frozenset("ERAF")

_log = logging.getLogger(__name__)


def conf_float(conf: Mapping[str, Any], key: str, default: float) -> float:
    """``conf[key]`` as a float >= 0; ``default`` when absent, null, or not such a number.

    ``sparse submit -o key=value`` YAML-parses the value (``50`` -> int, ``0.5`` -> float,
    ``"50"`` -> str, ``~`` or nothing -> None), so accept any of them via ``float(str(v))``.
    """
    value = conf.get(key)
    if value is None or isinstance(value, bool):
        return default
    try:
        number = float(str(value).strip())
    except ValueError:
        return default
    if not math.isfinite(number) or number < 0:
        return default
    return number


def conf_path(conf: Mapping[str, Any], key: str) -> str | None:
    """``conf[key]`` as a non-empty path string, else None (absent, null, empty)."""
    value = conf.get(key)
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    return text or None


def parse_control(text: str) -> dict[str, float]:
    """The known keys of a control file's JSON text; raises ValueError when it is invalid.

    The text must be a JSON object; each of :data:`CONTROL_KEYS` present must be a finite
    number >= 0 (a numeric string is accepted too).  Other keys are ignored.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"not a JSON object but {type(data).__name__}")
    values: dict[str, float] = {}
    for key in CONTROL_KEYS:
        if key not in data:
            continue
        raw = data[key]
        if raw is None or isinstance(raw, (bool, list, dict)):
            raise ValueError(f"{key}: not a number: {raw!r}")
        try:
            number = float(str(raw).strip())
        except ValueError:
            raise ValueError(f"{key}: not a number: {raw!r}") from None
        if not math.isfinite(number) or number < 0:
            raise ValueError(f"{key}: must be a finite number >= 0, got {raw!r}")
        values[key] = number
    return values


class ControlFile:
    """Values of a JSON control file over defaults, re-read when the file changes.

    ``values()`` stats the file at most once per ``check_every`` seconds (``clock`` time);
    when its (mtime_ns, size, inode) changed since the last successful read it re-reads it.
    A key absent from the file takes its default.  A missing, unreadable or invalid file
    keeps the previous values; the problem is logged once (again only after a good read or
    a different problem), and the file is retried at the next check.  Write the file
    atomically (write a temporary file, then ``os.replace``) so a reader never sees half of it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        defaults: Mapping[str, float],
        *,
        check_every: float = 1.0,
        logger: logging.Logger | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.defaults = dict(defaults)
        self.check_every = check_every
        self.logger = logger or _log
        self.clock = clock
        self.reloads = 0  # successful reads
        self._values = dict(self.defaults)
        self._stamp: tuple[int, int, int] | None = None
        self._next_check: float | None = None
        self._problem: str | None = None

    def values(self) -> dict[str, float]:
        """The current values (a copy), after checking the file if it is time to."""
        self.poll()
        return dict(self._values)

    def get(self, key: str) -> float:
        """One current value (checks the file if it is time to)."""
        self.poll()
        return self._values[key]

    def poll(self, force: bool = False) -> bool:
        """Check the file if ``check_every`` passed (or ``force``); True when values were read."""
        if self.path is None:
            return False
        now = self.clock()
        if not force and self._next_check is not None and now < self._next_check:
            return False
        self._next_check = now + self.check_every
        try:
            st = os.stat(self.path)
        except OSError as exc:
            self._report(f"cannot stat: {exc.strerror or exc}")
            return False
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp == self._stamp:
            return False
        try:
            with open(self.path, encoding="utf-8") as fh:
                text = fh.read()
            values = parse_control(text)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self._report(f"invalid, keeping {self._values}: {exc}")
            return False
        self._stamp = stamp
        self._values = {**self.defaults, **values}
        self.reloads += 1
        self._problem = None
        self.logger.info("control file %s: %s", self.path, self._values)
        return True

    def _report(self, problem: str) -> None:
        if problem != self._problem:
            self._problem = problem
            self.logger.warning("control file %s: %s", self.path, problem)


def burn_cpu(ms: float, *, batch: int = 64) -> int:
    """Hash until this process consumed ``ms`` milliseconds of CPU time; returns the rounds.

    Measured with ``time.process_time()`` (user + system CPU of the process), so under
    contention it takes longer in wall time but the same CPU.  ``ms <= 0`` returns at once.
    """
    if ms <= 0:
        return 0
    end = time.process_time() + ms / 1000.0
    digest = b"wordcount"
    rounds = 0
    while time.process_time() < end:
        for _ in range(batch):
            digest = hashlib.sha256(digest).digest()
        rounds += 1
    return rounds


def message_id(task: object, pid: int, start_ns: int, seq: int) -> str:
    """A spout message id unique across restarts: ``<task>-<pid>-<start_ns>-<seq>``."""
    return f"{task}-{pid}-{start_ns}-{seq}"


def ledger_line(kind: str, msg_id: str, at_us: int | None = None) -> bytes:
    """One ledger line: ``b"<kind> <id> <at_us>\\n"``; kind is E (emit), R (replay), A (ack),
    F (fail); ``at_us`` the wall-clock time in microseconds (left out when ``None``)."""
    if kind not in LEDGER_KINDS or len(kind) != 1:
        raise ValueError(f"ledger kind must be one of E, R, A, F, got {kind!r}")
    if not msg_id or any(c.isspace() for c in msg_id):
        raise ValueError(f"message id must be non-empty without whitespace, got {msg_id!r}")
    if at_us is None:
        return f"{kind} {msg_id}\n".encode()
    return f"{kind} {msg_id} {at_us}\n".encode()


def ledger_file_name(component: str, task: object, pid: int, start_ns: int) -> str:
    """``<component>-<task>-<pid>-<start_ns>.ledger`` (one file per spout process)."""
    return f"{component}-{task}-{pid}-{start_ns}.ledger"


class Ledger:
    """Append-only record of one spout process's message ids, one ``os.write`` per line.

    The file is opened ``O_APPEND`` without a Python buffer: every line is in the kernel once
    :meth:`record` returns, so killing the worker loses none (a host crash may; no fsync).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        component: str,
        task: object,
        pid: int,
        start_ns: int,
    ) -> None:
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(
            os.fspath(directory), ledger_file_name(component, task, pid, start_ns)
        )
        self._fd: int | None = os.open(
            self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644
        )

    def record(self, kind: str, msg_id: str) -> None:
        """Append ``<kind> <id> <now, µs>``; raises if the ledger is closed or the write fails."""
        if self._fd is None:
            raise ValueError(f"ledger {self.path} is closed")
        line = ledger_line(kind, msg_id, time.time_ns() // 1000)
        written = os.write(self._fd, line)
        if written != len(line):  # regular files do not short-write short lines; be sure
            os.write(self._fd, line[written:])

    def close(self) -> None:
        """Close the file descriptor (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
