"""The dashboard's WSGI server: waitress (pure Python, a production server), bounded.

``scheduler-py dashboard`` serves the Flask app (``scheduler_py/dashboard/app.py``) here, never
on Flask's development server. What one client can make the server spend, beside the app's
own bounds (``scheduler_py/dashboard/limits.py``):

- **threads**: :data:`THREADS` requests are handled at once; more wait in waitress's queue.
- **connections**: :data:`CONNECTION_LIMIT` open connections; beyond them waitress stops
  accepting until one closes (the rest wait in the listen backlog, :data:`BACKLOG`).
- **request size**: headers up to :data:`MAX_HEADER_BYTES`; a body over
  :data:`~scheduler_py.dashboard.limits.MAX_BODY_BYTES` is refused by waitress with 413
  before the app reads it.
- **idle connections**: closed after :data:`CHANNEL_TIMEOUT_SECS` without activity.

:func:`serve` blocks until the process is stopped. Ctrl-C, or an exception raised in the
main thread by a SIGTERM handler (``scheduler_py/cli/termination.py``), stops it: the
listening socket and every connection are closed and the worker threads are given
:data:`SHUTDOWN_GRACE_SECS` to finish the requests they are handling. waitress's event loop
runs in a thread of its own and the main thread only waits for it, because the loop's
dispatchers catch every exception raised in them (``waitress/wasyncore.py``): a SIGTERM
exception raised while the loop was in a dispatcher would be logged there and serving would
go on.

The stop runs in an order that leaves no thread with a closed descriptor: the loop closes the
listening sockets and the connections (a worker writing to one gets waitress's
``ClientDisconnected``) and then ends; the worker threads finish; only then is the loop's
wake-up pipe (waitress's trigger) closed, since a worker pulls it when it finishes a request.
Closing everything at once, trigger included, raced a worker's last pull and the loop's next
``select`` (both failing with ``EBADF``). The main thread waits on an event the loop sets as
it ends, not on ``Thread.join``: on CPython 3.11 an exception raised by a signal handler
inside ``join`` marks the thread stopped while it still runs (``threading.py``,
``_wait_for_tstate_lock``), and the stop would then close the sockets under the running loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from scheduler_py.dashboard.limits import MAX_BODY_BYTES

log = logging.getLogger(__name__)

THREADS = 8
"""requests handled at once (the what-ifs among them are capped lower, limits.py)"""
CONNECTION_LIMIT = 64
"""open connections at once"""
BACKLOG = 64
"""connections the kernel queues before they are accepted"""
MAX_HEADER_BYTES = 64 * 1024
"""a request's line and headers (waitress answers 431 beyond it)"""
CHANNEL_TIMEOUT_SECS = 60
"""an idle connection is closed after this"""
SHUTDOWN_GRACE_SECS = 5
"""how long a stop waits for the requests being handled"""
WAIT_SLICE_SECS = 0.5
"""the main thread's wait for the server loop, in slices (a signal handler runs between)"""


def serve(
    app: Callable[..., Any],
    host: str,
    port: int,
    on_listening: Callable[[list[tuple[str, int]]], None] | None = None,
) -> None:
    """Serve the WSGI ``app`` on ``host:port`` until stopped; ``on_listening`` gets the
    (host, port) pairs listened on once the sockets listen (a name such as ``localhost`` may
    give one per address family; ``port`` 0 picks a free port, reported here)."""
    from waitress import wasyncore
    from waitress.channel import HTTPChannel
    from waitress.server import create_server

    channels: dict[int, Any] = {}
    server = create_server(
        app,
        map=channels,
        host=host,
        port=port,
        threads=THREADS,
        connection_limit=CONNECTION_LIMIT,
        backlog=BACKLOG,
        max_request_header_size=MAX_HEADER_BYTES,
        max_request_body_size=MAX_BODY_BYTES,
        channel_timeout=CHANNEL_TIMEOUT_SECS,
        ident="scheduler-py",
        clear_untrusted_proxy_headers=True,
    )
    listening = [
        (str(address), int(bound_port))
        for address, bound_port in getattr(server, "effective_listen", None)
        or [(server.effective_host, server.effective_port)]
    ]
    wake = _trigger_of(channels)
    stopping = threading.Event()

    loop_ended = threading.Event()

    def run_loop() -> None:
        try:
            while channels and not stopping.is_set():
                wasyncore.loop(
                    timeout=server.adj.asyncore_loop_timeout,
                    map=channels,
                    use_poll=server.adj.asyncore_use_poll,
                    count=1,
                )
        finally:
            loop_ended.set()

    def close_listeners_and_connections() -> None:  # runs in the loop's thread
        stopping.set()
        for dispatcher in list(channels.values()):
            if dispatcher is wake:
                continue
            if isinstance(dispatcher, HTTPChannel):
                dispatcher.handle_close()  # also wakes a worker waiting to flush to it
            else:  # a listening socket; the server's own close() would close the trigger too
                wasyncore.dispatcher.close(dispatcher)

    loop = threading.Thread(target=run_loop, name="dashboard-server", daemon=True)
    try:
        if on_listening is not None:
            on_listening(listening)
        log.info(
            "serving on %s (%d threads, %d connections)",
            ", ".join(f"{address}:{bound_port}" for address, bound_port in listening),
            THREADS,
            CONNECTION_LIMIT,
        )
        loop.start()
        while not loop_ended.wait(WAIT_SLICE_SECS):
            pass  # SIGTERM and Ctrl-C arrive here, in the main thread
    finally:
        if not loop_ended.is_set():
            wake.pull_trigger(close_listeners_and_connections)
            loop_ended.wait(SHUTDOWN_GRACE_SECS)
        server.task_dispatcher.shutdown(timeout=SHUTDOWN_GRACE_SECS)
        if not loop_ended.is_set() or server.task_dispatcher.threads:
            log.warning(
                "stopped without waiting for %d request(s) still being handled after %d s",
                len(server.task_dispatcher.threads),
                SHUTDOWN_GRACE_SECS,
            )
        else:
            wasyncore.close_all(channels)


def _trigger_of(channels: dict[int, Any]) -> Any:
    """waitress's wake-up pipe for the loop over ``channels`` (one per server, shared by
    every listening socket; ``waitress/server.py``)."""
    from waitress.trigger import trigger

    for dispatcher in channels.values():
        if isinstance(dispatcher, trigger):
            return dispatcher
    raise RuntimeError("waitress created no trigger for its loop; expected one per server")
