"""The resource bounds of the brain's Thrift port: what one peer can make the brain hold.

* **Frame size**: a frame header announcing more than ``max_frame_bytes`` (default 64 MiB; a
  10,000-executor snapshot is a few MB) is refused as soon as its four bytes arrive, before the
  framed transport would reserve the frame (:class:`GuardedTransport`).
* **Per-call deadline**: a request must be complete within ``call_deadline_secs`` of its first
  byte, however the bytes trickle in (every read waits at most what is left of it); between
  calls a connection may stay idle for the server's client timeout.
* **Collector**: cyclic garbage collection is paused only once a complete request is in, until
  its answer is out (``server.collection_paused``), never for a partial one.
* **Connections**: at most ``max_connections`` at once; the next one is closed at once, with
  one WARNING when the cap is reached and one INFO when there is room again
  (:class:`ConnectionSlots`).
* **Accept errors** (no file descriptors left): retried with a back-off up to
  :data:`MAX_ACCEPT_BACKOFF_SECS`, one WARNING per streak (:class:`AcceptBackoff`).

``scheduler_py/service/server.py`` (``BrainServer``) applies them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from thriftpy2.transport import TTransportException

log = logging.getLogger(__name__)

MAX_FRAME_BYTES = 64 * 1024 * 1024
MAX_CONNECTIONS = 64
CALL_DEADLINE_SECS = 10.0
MAX_ACCEPT_BACKOFF_SECS = 1.0


@dataclass(frozen=True)
class Bounds:
    """What one peer of the port can make the brain hold (``serve``'s defaults)."""

    max_frame_bytes: int = MAX_FRAME_BYTES
    max_connections: int = MAX_CONNECTIONS
    call_deadline_secs: float = CALL_DEADLINE_SECS


class PeerRefused(TTransportException):
    """A connection the server drops because its peer broke a bound (the message says which)."""

    def __init__(self, message: str) -> None:
        super().__init__(TTransportException.UNKNOWN, message)


class GuardedTransport:
    """An accepted connection's transport, as the framed transport reads it: counts the bytes,
    follows the frames as they pass (header, payload; a read never goes past the current
    one, so every header is checked before the framed transport sees it), and enforces the
    frame size and the per-call deadline; ``on_request`` is called once a frame — a whole
    request — is in."""

    def __init__(
        self,
        client: Any,
        max_frame_bytes: int = MAX_FRAME_BYTES,
        call_deadline_secs: float = CALL_DEADLINE_SECS,
        idle_timeout_secs: float | None = None,
    ) -> None:
        self.client = client
        self.max_frame_bytes = max_frame_bytes
        self.call_deadline_secs = call_deadline_secs
        self.idle_timeout_secs = idle_timeout_secs
        self.received = 0
        self.wrote = False
        self.on_request: Callable[[], Any] | None = None
        """called once, when the next complete frame has arrived"""
        self._header = bytearray()
        self._left = 0  # payload bytes of the current frame still to come
        self._started: float | None = None  # when the current frame's first byte came

    def read(self, size: int) -> bytes:
        wait = self._wait()
        self._set_timeout(wait)
        # never past the current header or frame: the framed transport buffers what it is
        # given, so a following header must be checked before it gets there
        limit = 4 - len(self._header) if self._left == 0 else self._left
        try:
            data = self.client.read(min(size, limit))
        except TimeoutError:
            if (
                self._started is not None
                and wait is not None
                and wait < (self.idle_timeout_secs or float("inf"))
            ):
                raise self._late() from None
            raise
        self.received += len(data)
        self._follow(data)
        return data

    def write(self, data: bytes) -> None:
        self.wrote = True
        self._set_timeout(self.idle_timeout_secs)  # an answer gets the whole idle timeout
        self.client.write(data)

    def __getattr__(self, name: str) -> Any:  # flush, close, is_open, sock: the client's own
        return getattr(self.client, name)

    def _wait(self) -> float | None:
        """How long the next read may wait: the idle timeout between calls, what is left of
        the deadline within one."""
        if self._started is None:
            return self.idle_timeout_secs
        left = self.call_deadline_secs - (time.monotonic() - self._started)
        if left <= 0:
            raise self._late()
        return left if self.idle_timeout_secs is None else min(left, self.idle_timeout_secs)

    def _late(self) -> PeerRefused:
        return PeerRefused(
            f"its request was not complete {self.call_deadline_secs:g} s after its first byte "
            "(the per-call deadline)"
        )

    def _set_timeout(self, seconds: float | None) -> None:
        sock = getattr(self.client, "sock", None)
        if sock is not None:
            sock.settimeout(seconds)

    def _follow(self, data: bytes) -> None:
        at, end = 0, len(data)
        while at < end:
            if self._left == 0:
                if self._started is None:
                    self._started = time.monotonic()
                take = min(4 - len(self._header), end - at)
                self._header += data[at : at + take]
                at += take
                if len(self._header) == 4:
                    self._left = self._frame_size(bytes(self._header))
                    self._header.clear()
            else:
                take = min(self._left, end - at)
                self._left -= take
                at += take
                if self._left == 0:
                    self._started = None
                    notify, self.on_request = self.on_request, None
                    if notify is not None:
                        notify()

    def _frame_size(self, header: bytes) -> int:
        size = int.from_bytes(header, "big", signed=True)
        if size <= 0 or size > self.max_frame_bytes:
            raise PeerRefused(
                f"its frame header announces {size} bytes; expected 1 to "
                f"{self.max_frame_bytes} (framed binary Thrift as the shim sends)"
            )
        return size


class ConnectionSlots:
    """At most ``limit`` connections at once; one WARNING when the cap is reached, one INFO
    (with how many were refused) when a connection closes below it again."""

    def __init__(self, limit: int = MAX_CONNECTIONS) -> None:
        self.limit = limit
        self._open = 0
        self._refused = 0
        self._lock = threading.Lock()

    @property
    def in_use(self) -> int:
        return self._open

    def take(self, peer: str) -> bool:
        with self._lock:
            if self._open < self.limit:
                self._open += 1
                return True
            self._refused += 1
            first = self._refused == 1
        if first:
            log.warning(
                "%d connections open, the most this brain serves: closing new ones (the "
                "first from %s) until one ends; the shim's rounds fall back to "
                "DefaultScheduler meanwhile",
                self.limit,
                peer,
            )
        return False

    def give_back(self) -> None:
        with self._lock:
            self._open -= 1
            refused, self._refused = self._refused, 0
        if refused:
            log.info("a connection slot is free again; %d connection(s) were refused", refused)


class AcceptBackoff:
    """Waits after a failed ``accept`` (no file descriptor left, ...): 50 ms, doubling up to
    :data:`MAX_ACCEPT_BACKOFF_SECS`; one WARNING per streak of failures, DEBUG after it."""

    def __init__(self, sleep: Callable[[float], None] = time.sleep) -> None:
        self._delay = 0.0
        self._failures = 0
        self._sleep = sleep

    def failed(self, error: OSError) -> None:
        self._failures += 1
        self._delay = min(max(2 * self._delay, 0.05), MAX_ACCEPT_BACKOFF_SECS)
        if self._failures == 1:
            log.warning(
                "accepting a connection failed (%s); retrying every %g s at most, further "
                "failures at DEBUG until one succeeds",
                error,
                MAX_ACCEPT_BACKOFF_SECS,
            )
        else:
            log.debug("accepting a connection failed again (%s)", error)
        self._sleep(self._delay)

    def succeeded(self) -> None:
        if self._failures:
            log.info("accepting connections again after %d failure(s)", self._failures)
        self._failures = 0
        self._delay = 0.0


DISCARD_BYTES = 1 << 20
DISCARD_SECS = 0.5


def discard_pending(client: Any) -> None:
    """Read and drop what a refused peer still sends — at most :data:`DISCARD_BYTES` within
    :data:`DISCARD_SECS` — so closing the connection ends it with a FIN the peer can read,
    not a reset in the middle of its send."""
    sock = getattr(client, "sock", None)
    if sock is None:
        return
    deadline = time.monotonic() + DISCARD_SECS
    dropped = 0
    try:
        while dropped < DISCARD_BYTES:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                return
            dropped += len(chunk)
    except OSError:
        return
