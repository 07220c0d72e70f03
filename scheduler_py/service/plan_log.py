"""The brain's plan log (``serve --plan-log``), written off the round's path.

One JSON object per topology decision, one per line (``TopologyDecision.log_entry`` in
``scheduler_py/scheduling/round.py``, plus the round, its timestamp and its duration). Nimbus
waits for the brain's reply, not for the log, so a round only queues its decisions here and a
writer thread turns them into lines after the reply has left; that is also where the
summaries' deferred routing numbers get computed (``scheduler_py/scheduling/routing.py``).
Lines keep the rounds' order. A write that fails is logged with the path and the error and
the writer carries on with the next decision: a full disk must not stop scheduling.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)

FLUSH_SECS = 10.0
"""how long :meth:`PlanLogWriter.flush` waits by default"""


class LoggedDecision(Protocol):
    def log_entry(self) -> dict[str, Any]: ...


_STOP = object()


class PlanLogWriter:
    """Appends queued decisions to ``path`` from a daemon thread of its own."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="plan-log", daemon=True)
        self._thread.start()

    def append(self, decisions: Sequence[LoggedDecision], extra: Mapping[str, Any]) -> None:
        """Queue ``decisions`` (each entry gains the fields of ``extra``)."""
        if decisions:
            self._queue.put((tuple(decisions), dict(extra)))

    def flush(self, timeout: float = FLUSH_SECS) -> bool:
        """Wait until everything queued so far is written; ``False`` if ``timeout`` ran out."""
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def close(self, timeout: float = FLUSH_SECS) -> None:
        """Write what is queued and stop the thread."""
        self._queue.put(_STOP)
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning(
                "the plan log writer did not finish within %.0f s; the last decisions may be "
                "missing from %s",
                timeout,
                self.path,
            )

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            decisions, extra = item
            try:
                lines = [_line(decision, extra) for decision in decisions]
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as out:
                    out.write("".join(lines))
            except OSError as error:
                log.error(
                    "could not append %d decision(s) to the plan log %s (%s); check that its "
                    "directory is writable and the disk is not full",
                    len(decisions),
                    self.path,
                    error,
                )
            except Exception:  # a bug in an entry must not stop the log or the brain
                log.exception("could not append %d decision(s) to the plan log", len(decisions))


def _line(decision: LoggedDecision, extra: Mapping[str, Any]) -> str:
    return json.dumps(decision.log_entry() | dict(extra), sort_keys=True, default=str) + "\n"
