"""A Thrift client of the brain's ``SchedulerBrain`` service, for operator tools
(``scheduler-py replan``/``history``/``trigger``, the dashboard, benchmarks): :func:`call_brain`
for one call on its own connection, :func:`brain_client` for a connection to keep.

A call that carries the operator secret (``replan`` that applies, ``set_trigger_paused``) is
sent only after the brain, on the same connection, proved it holds that secret: the answer to
``prove_operator_secret`` over a fresh random challenge (``scheduler_py/service/auth.py``,
``secret_proof``). A peer that cannot — an impostor on the brain's port while the brain is
down, a brain with another secret, a brain older than this client — never sees the secret
(:class:`BrainNotProven`)."""

from __future__ import annotations

import hmac
import secrets
from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TFramedTransportFactory, TTransportException

from scheduler_py.service.auth import secret_proof
from scheduler_py.service.wire import wire

DEFAULT_BRAIN = "127.0.0.1:9627"
SECRET_ARGUMENT = {"replan": 3, "set_trigger_paused": 2}
"""the position of ``secret`` among the arguments of the calls that carry it
(``scheduler.thrift``)"""
CHALLENGE_LENGTH = 32


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


class BrainNotProven(BrainUnreachable):
    """The peer at the brain's address did not prove it holds the operator secret, so the
    secret was not sent (the message says what it answered)."""


def call_brain(address: str, method: str, *args: Any, timeout_ms: int = 60_000) -> Any:
    """``method(*args)`` on the brain at ``address`` over a connection of its own, closed
    afterwards; a call carrying the operator secret only once the brain proved it holds it.
    :class:`BrainUnreachable` when it cannot connect, :class:`BrainNotProven` when the peer
    fails the proof; the brain's ``BrainError`` (a refusal) and errors of the call itself pass
    through."""
    try:
        client = brain_client(address, timeout_ms)
    except Exception as error:
        raise BrainUnreachable(str(error)) from error
    try:
        position = SECRET_ARGUMENT.get(method)
        secret = args[position] if position is not None and len(args) > position else ""
        if secret:
            verify_brain(client, address, secret)
        return getattr(client, method)(*args)
    finally:
        client.close()


def verify_brain(client: Any, address: str, secret: str) -> None:
    """:class:`BrainNotProven` unless the peer behind ``client`` answers a fresh challenge
    with the proof for ``secret``."""
    challenge = secrets.token_bytes(CHALLENGE_LENGTH)
    not_sent = "the operator secret was not sent"
    try:
        answer = client.prove_operator_secret(challenge)
    except wire().BrainError as error:
        raise BrainNotProven(
            f"the brain at {address} cannot prove it holds the operator secret "
            f"({error.message}); {not_sent}"
        ) from None
    except TTransportException as error:
        raise BrainNotProven(
            f"the peer at {address} closed the connection when asked to prove it holds the "
            f"operator secret ({error.message or error.type}); {not_sent}"
        ) from None
    except TApplicationException as error:
        raise BrainNotProven(
            f"the peer at {address} does not know prove_operator_secret ({error}): a brain "
            f"older than this client, or not a brain; {not_sent}"
        ) from None
    if not isinstance(answer, str) or not hmac.compare_digest(
        answer.encode(), secret_proof(secret, challenge).encode()
    ):
        raise BrainNotProven(
            f"the peer at {address} did not prove it holds the operator secret this tool reads "
            "(expected the HMAC of our challenge under it, found a different one): a brain "
            "started with another secret, or an impostor; the call needs the operator secret "
            f"the brain holds, and {not_sent}"
        )
