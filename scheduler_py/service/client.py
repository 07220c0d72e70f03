"""A Thrift client of the brain's ``SchedulerBrain`` service, for operator tools
(``scheduler-py replan``/``history``, the dashboard, benchmarks): :func:`call_brain` for one
call on its own connection, :func:`brain_client` for a connection to keep."""

from __future__ import annotations

from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TFramedTransportFactory

from scheduler_py.service.wire import wire

DEFAULT_BRAIN = "127.0.0.1:9627"


def brain_client(address: str, timeout_ms: int = 60_000) -> Any:
    """A connected client of the brain at ``address`` (``HOST:PORT``); close it after use."""
    host, _, port = address.rpartition(":")
    try:
        port_number = int(port)
    except ValueError:
        raise ValueError(f"expected the brain's address as HOST:PORT, found {address!r}") from None
    return make_client(
        wire().SchedulerBrain,
        host=host or "127.0.0.1",
        port=port_number,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=timeout_ms,
    )


class BrainUnreachable(ConnectionError):
    """No connection to the brain could be made (or its address is malformed); the message
    says why."""


def call_brain(address: str, method: str, *args: Any, timeout_ms: int = 60_000) -> Any:
    """``method(*args)`` on the brain at ``address`` over a connection of its own, closed
    afterwards. :class:`BrainUnreachable` when it cannot connect; the brain's ``BrainError``
    (a refusal) and errors of the call itself pass through."""
    try:
        client = brain_client(address, timeout_ms)
    except Exception as error:
        raise BrainUnreachable(str(error)) from error
    try:
        return getattr(client, method)(*args)
    finally:
        client.close()
