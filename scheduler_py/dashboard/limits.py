"""What one HTTP client can make the dashboard — and through it the brain — spend.

The what-if endpoint needs no credential (it changes nothing), so it is bounded:

- **body size**: :data:`MAX_BODY_BYTES` (64 KiB) for every request, Flask's
  ``MAX_CONTENT_LENGTH`` (a larger body: 413 with a JSON error). A plan request is a few
  hundred bytes.
- **JSON nesting**: :data:`MAX_JSON_DEPTH` (8) levels of arrays and objects
  (:func:`scheduler_py.dashboard.inputs.json_body`; deeper: 400 naming the limit, never the
  parser's recursion error). A plan request is 2 levels deep.
- **parameters**: the ones that set how long an algorithm may search are capped by
  :data:`scheduler_py.dashboard.inputs.PARAM_CAPS` (400 naming the cap).
- **concurrency**: :data:`MAX_WHATIF_IN_FLIGHT` (2) what-ifs at once; another gets 429 with
  ``Retry-After`` (:data:`RETRY_AFTER_SECS`). A slot is held until the brain has answered
  (or the dashboard's call to it failed), also when the client was told the budget ran out.
- **time**: a what-if is answered within :data:`WHATIF_BUDGET_SECS` (20 s): after it, 504
  with ``Retry-After`` (the brain's answer is still awaited in the background, holding its
  slot, so a client cannot pile up work by giving up early).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

MAX_BODY_BYTES = 64 * 1024
MAX_JSON_DEPTH = 8
MAX_WHATIF_IN_FLIGHT = 2
WHATIF_BUDGET_SECS = 20.0
RETRY_AFTER_SECS = 5

T = TypeVar("T")


class Busy(Exception):
    """Every what-if slot is taken (the API answers 429 with ``Retry-After``)."""


class OverBudget(Exception):
    """The what-if did not finish within its budget (the API answers 504)."""


class WhatIfGate:
    """At most ``in_flight`` calls at once, each answered within ``budget_secs``."""

    def __init__(
        self, in_flight: int = MAX_WHATIF_IN_FLIGHT, budget_secs: float = WHATIF_BUDGET_SECS
    ) -> None:
        self.in_flight = in_flight
        self.budget_secs = budget_secs
        self._slots = threading.BoundedSemaphore(in_flight)
        self._pool = ThreadPoolExecutor(in_flight, thread_name_prefix="dashboard-whatif")

    def run(self, call: Callable[[], T]) -> T:
        """``call()``'s result; :class:`Busy` when every slot is taken, :class:`OverBudget`
        when it runs longer than the budget (it keeps its slot until it returns)."""
        if not self._slots.acquire(blocking=False):
            raise Busy(
                f"{self.in_flight} what-if(s) are already running (the dashboard's cap); "
                f"try again in {RETRY_AFTER_SECS}s"
            )
        try:
            future: Future[T] = self._pool.submit(call)
        except BaseException:
            self._slots.release()
            raise
        future.add_done_callback(self._release)
        try:
            return future.result(timeout=self.budget_secs)
        except FutureTimeout:
            raise OverBudget(
                f"the what-if did not finish within its budget of {self.budget_secs:g}s; "
                "try fewer candidates or a smaller time parameter"
            ) from None

    def _release(self, _: Any) -> None:
        self._slots.release()
