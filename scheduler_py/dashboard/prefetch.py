"""Aggregates read and cleaned off the request path (``scheduler-py dashboard`` turns it on).

A measured aggregate of a large topology is megabytes of JSON with tens of thousands of
executor pairs; reading and cleaning it took 0.3-2 s on the benchmark machine
(``scheduler-py bench dashboard_api --set aggregate_cache_secs=0``), and the ZooKeeper source
re-reads it every few seconds, so an operator's page polling every 5 s paid it on most polls.
:class:`Prefetcher` answers every request from what it last read and re-reads, on a thread of
its own every ``period`` seconds, the topologies asked for in the last ``forget_after`` seconds.
Only the first request for a topology reads in the request. An answer is at most ``period``
seconds older than the source's; a read error is answered like a read (``(None, error)``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_PERIOD = 2.0
"""seconds between re-reads; ``scheduler-py dashboard`` uses it (ZooKeeperAggregates caches each
aggregate for 5 s)"""

Read = Callable[[str], tuple[Mapping[str, Any] | None, str | None]]
"""topology id -> (cleaned aggregate or None, error or None); never raises"""


class Prefetcher:
    def __init__(
        self, read: Read, period: float = DEFAULT_PERIOD, forget_after: float = 60.0
    ) -> None:
        self.read = read
        self.period = period
        self.forget_after = forget_after
        self._lock = threading.Lock()
        self._answers: dict[str, tuple[Mapping[str, Any] | None, str | None]] = {}
        self._asked: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def get(self, topology_id: str) -> tuple[Mapping[str, Any] | None, str | None]:
        with self._lock:
            self._asked[topology_id] = time.monotonic()
            answer = self._answers.get(topology_id)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="dashboard-aggregates", daemon=True
                )
                self._thread.start()
        if answer is None:  # first request for this topology: read it now
            answer = self._refresh(topology_id)
        return answer

    def close(self) -> None:
        self._stop.set()

    def _refresh(self, topology_id: str) -> tuple[Mapping[str, Any] | None, str | None]:
        answer = self.read(topology_id)
        with self._lock:
            if topology_id in self._asked:  # not forgotten meanwhile
                self._answers[topology_id] = answer
        return answer

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            now = time.monotonic()
            with self._lock:
                for gone in [t for t, at in self._asked.items() if now - at > self.forget_after]:
                    del self._asked[gone]
                    self._answers.pop(gone, None)
                wanted = list(self._asked)
            for topology_id in wanted:
                try:
                    self._refresh(topology_id)
                except Exception:  # the thread must outlive any one read
                    log.exception("reading the aggregate of %s failed", topology_id)
