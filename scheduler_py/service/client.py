"""A Thrift client of the brain's ``SchedulerBrain`` service, for operator tools
(``scheduler-py replan``/``history``/``trigger``, the dashboard, benchmarks): :func:`call_brain`
for one call on its own connection, :func:`brain_client` for a connection to keep.

A call that carries the operator secret (``replan`` that applies, ``set_trigger_paused``) is
sent only after the brain, on the same connection, proved it holds that secret: the answer to
``prove_operator_secret`` over a fresh random challenge (``scheduler_py/service/auth.py``,
``secret_proof``). A peer that cannot — an impostor on the brain's port while the brain is
down, a brain with another secret, a brain older than this client — never sees the secret
(:class:`BrainNotProven`).

A read (``status``, ``history``, a dry-run ``replan``) goes out without the secret. A brain
started with ``serve --require-auth-reads`` refuses it with a ``BrainError`` whose
``needs_operator_secret`` is set; the client then reads the secret (``read_secret``, by default
``$SCHEDULER_PY_SECRET`` or the default secret file, ``scheduler_py/service/auth.py``), has the
brain prove it holds it on the same connection, and calls again with it. It remembers, for the
life of the process, that the brain at that address wants the secret, so a long-lived client
(the dashboard) proves and sends it at once from then on."""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Callable
from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TFramedTransportFactory, TTransportException

from scheduler_py.service.auth import SecretError, load_secret, secret_proof
from scheduler_py.service.wire import wire

DEFAULT_BRAIN = "127.0.0.1:9627"
SECRET_ARGUMENT = {"replan": 3, "set_trigger_paused": 2}
"""the position of ``secret`` among the arguments of the calls that carry it
(``scheduler.thrift``)"""
READ_SECRET_ARGUMENT = {"status": 0, "history": 1, "replan": 3}
"""where a read carries the operator secret for a brain started with ``serve
--require-auth-reads`` (``scheduler.thrift``; ``replan``: a dry run)"""
CHALLENGE_LENGTH = 32

_reads_need_secret: set[str] = set()
"""addresses whose brain refused a read without the operator secret (this process's life)"""
_reads_lock = threading.Lock()


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


def call_brain(
    address: str,
    method: str,
    *args: Any,
    timeout_ms: int = 60_000,
    read_secret: Callable[[], str | None] | None = None,
) -> Any:
    """``method(*args)`` on the brain at ``address`` over a connection of its own, closed
    afterwards; a call carrying the operator secret only once the brain proved it holds it.
    A read the brain refuses for want of the operator secret (``serve --require-auth-reads``)
    is sent again with the secret ``read_secret`` returns (default: :func:`default_read_secret`)
    once the brain proved it holds it.
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
        if method not in READ_SECRET_ARGUMENT:
            return getattr(client, method)(*args)
        return _read(client, address, method, args, read_secret or default_read_secret)
    finally:
        client.close()


def default_read_secret() -> str | None:
    """The operator secret this process can read (``scheduler_py/service/auth.py``:
    ``$SCHEDULER_PY_SECRET``, ``$SCHEDULER_PY_SECRET_FILE``, the default file), or ``None``;
    :class:`SecretError` when the file is unsafe."""
    found = load_secret()
    return found.value if found is not None else None


def _read(
    client: Any,
    address: str,
    method: str,
    args: tuple[Any, ...],
    read_secret: Callable[[], str | None],
) -> Any:
    """A read: with the secret at once when this brain wanted it before (and still proves it
    holds it), else without; a refusal for want of the secret is answered with it."""
    with _reads_lock:
        wanted_before = address in _reads_need_secret
    if wanted_before:
        secret = _secret_for_reads(read_secret, address)
        if secret:
            try:
                verify_brain(client, address, secret)
            except BrainNotProven:  # another brain now, perhaps without the option: try plain
                with _reads_lock:
                    _reads_need_secret.discard(address)
            else:
                return getattr(client, method)(*_with_secret(method, args, secret))
    try:
        return getattr(client, method)(*args)
    except wire().BrainError as error:
        if not getattr(error, "needs_operator_secret", False):
            raise
        secret = _secret_for_reads(read_secret, address)
        if not secret:
            raise  # the brain's message says which secret it expects
        with _reads_lock:
            _reads_need_secret.add(address)
        verify_brain(client, address, secret)
        return getattr(client, method)(*_with_secret(method, args, secret))


def _secret_for_reads(read_secret: Callable[[], str | None], address: str) -> str | None:
    try:
        return read_secret()
    except SecretError as error:
        raise BrainNotProven(
            f"the brain at {address} answers reads only with the operator secret, and this "
            f"tool cannot read it safely: {error}"
        ) from None


def _with_secret(method: str, args: tuple[Any, ...], secret: str) -> tuple[Any, ...]:
    """``args`` with ``secret`` at the read's secret argument (padded with empty strings)."""
    position = READ_SECRET_ARGUMENT[method]
    padded = list(args) + [""] * max(0, position + 1 - len(args))
    padded[position] = secret
    return tuple(padded)


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
