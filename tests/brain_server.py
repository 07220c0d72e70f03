"""A real Thrift brain for in-process tests: :func:`scheduler_py.service.server.make_brain_server`
on a free loopback port, serving from a daemon thread."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from scheduler_py.service.server import BrainHandler, make_brain_server


def serve_brain(handler: BrainHandler, **options: Any) -> tuple[Any, str]:
    """Serve ``handler`` (``options`` go to ``make_brain_server``); returns ``(server,
    "127.0.0.1:PORT")`` once the port accepts connections. The caller closes the server."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = make_brain_server(handler, "127.0.0.1", port, **options)
    threading.Thread(target=server.serve, daemon=True).start()
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, f"127.0.0.1:{port}"
        except OSError:
            assert time.monotonic() < deadline, f"the brain did not start listening on {port}"
            time.sleep(0.05)


def port_of(address: str) -> int:
    """``"127.0.0.1:PORT"`` -> ``PORT``."""
    return int(address.rsplit(":", 1)[1])
