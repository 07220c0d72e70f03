"""SIGTERM for the long-running commands: the way a service manager stops a process
(systemd's default ``KillSignal=``, ``docker stop``; deploy/systemd/).

Without a handler Python dies on SIGTERM at once and no ``finally`` runs, so ``serve`` would
lose its plan log's queued lines and leave its reconfiguration controller mid-step.
:func:`sigterm_unwinds` turns SIGTERM into :class:`Terminated`, raised in the main thread
wherever it blocks, which unwinds through the same cleanup as Ctrl-C's ``KeyboardInterrupt``
(scheduler_py/service/server.py, ``serve``'s ``finally``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(BaseException):
    """SIGTERM arrived. A ``BaseException``, like ``KeyboardInterrupt``, so that no
    ``except Exception`` on the way up swallows it."""


def _raise_terminated(signum: int, _frame: FrameType | None) -> None:
    raise Terminated(signal.Signals(signum).name)


@contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """Within the block SIGTERM raises :class:`Terminated` in the main thread; the previous
    handler is back afterwards. Outside the main thread (where Python cannot install a
    handler) the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
