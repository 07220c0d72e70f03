"""The thriftpy2 service Nimbus's shim calls every scheduling round (``scheduler-py serve``).

A round: Thrift snapshot → :func:`~scheduler_py.service.snapshot.to_state` →
:func:`scheduler_py.scheduling.round.plan_round` → :func:`~scheduler_py.service.snapshot.
to_reply`. The reconfiguration controller, when one runs, is reached only through
:class:`~scheduler_py.scheduling.interfaces.ReconfigurationPort`. Framed transport + binary
protocol, like the shim. Every reply is also appended to a JSON
lines *plan log* (one object per topology decision) so operators and ``make demo`` can see
what the brain planned, by a writer thread once the reply is out
(``scheduler_py/service/plan_log.py``); the log is the only state the service writes.
``status`` answers what the last round saw and decided
(``scheduler_py/scheduling/status.py``, read by the dashboard). A ``replan`` that changes a
topology, and pausing or resuming the automatic trigger (``set_trigger_paused``), must carry
the operator secret (``scheduler_py/service/auth.py``).

Who can talk to the brain: only the shim may feed a round — it seals every snapshot with the
shim key, an HMAC the brain checks together with the snapshot's timestamp and that the seal is
new (:class:`SealedRounds`, ``scheduler_py/service/shim_auth.py``); an unsealed round is
refused, or, with ``serve --allow-unauthenticated-rounds``, answered without ever reaching
the controller. Calls that change a topology need the operator secret; read-only calls
(``status``, ``history``, a dry-run ``replan``) need nothing, unless the brain was started with
``serve --require-auth-reads``: then they need the operator secret too, and a call without it
is refused with a ``BrainError`` whose ``needs_operator_secret`` is set (the tools then make the
brain prove it holds the secret and call again with it, ``scheduler_py/service/client.py``);
only ``ping`` (the version) and ``prove_operator_secret`` (an HMAC over the caller's own
challenge) answer anyone. The port listens on 127.0.0.1 unless ``serve --host`` says
otherwise. What one peer can make the port hold — frame size, connections, the time a
request may take to arrive, the collector — is bounded (``scheduler_py/service/bounded.py``).

A round that took longer than the shim waits (the snapshot's ``timeout_ms``; the shim's
``BrainClient`` gives up then and the round falls back to DefaultScheduler) is *late*: its
reply still goes out, but none of its decisions is recorded — not in the plan log, the status
or the controller — since Storm applied none of them (a fault test: the brain slow,
``tests/cluster/test_faults.py``).
"""

from __future__ import annotations

import gc
import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.server import TThreadedServer
from thriftpy2.thrift import TProcessor
from thriftpy2.transport import TFramedTransportFactory, TServerSocket, TTransportException

from scheduler_py import __version__
from scheduler_py.model.errors import SchedulingError
from scheduler_py.scheduling.interfaces import OperatorError, ReconfigurationPort
from scheduler_py.scheduling.round import KEEP, PLACE, RoundConfig, TopologyDecision, plan_round
from scheduler_py.scheduling.state import ClusterState
from scheduler_py.scheduling.status import count_fallbacks, status_document
from scheduler_py.service.auth import CHALLENGE_BYTES, SECRET_ENV, OperatorSecret
from scheduler_py.service.bounded import (
    AcceptBackoff,
    Bounds,
    ConnectionSlots,
    GuardedTransport,
    discard_pending,
)
from scheduler_py.service.plan_log import FLUSH_SECS, PlanLogWriter
from scheduler_py.service.shim_auth import (
    ShimAuth,
    ShimAuthError,
    ensure_key,
    open_sealed,
    seal_reply,
)
from scheduler_py.service.snapshot import to_reply, to_state
from scheduler_py.service.wire import wire

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9627


class BrainHandler:
    """Implements the ``SchedulerBrain`` service of ``scheduler.thrift``."""

    def __init__(
        self,
        config: RoundConfig,
        plan_log: Path | None = None,
        controller: ReconfigurationPort | None = None,
        operator_secret: OperatorSecret | None = None,
        reads_need_secret: bool = False,
    ) -> None:
        if reads_need_secret and operator_secret is None:
            raise ValueError(
                "reads_need_secret (serve --require-auth-reads) needs an operator secret to "
                "check reads against; expected one, found none"
            )
        self.config = config
        self._plan_writer = PlanLogWriter(plan_log) if plan_log is not None else None
        self.controller = controller
        self.operator_secret = operator_secret
        """what a changing call must carry; ``None``: every changing call is refused"""
        self.reads_need_secret = reads_need_secret
        """``status``, ``history`` and dry runs need :attr:`operator_secret` as well"""
        self._lock = threading.Lock()
        self._replans = threading.BoundedSemaphore(MAX_REPLANS_AT_ONCE)
        self.last_records: dict[str, TopologyDecision] = {}
        self._last_state: ClusterState | None = None
        self._last_decisions: dict[str, TopologyDecision] = {}
        self._last_seconds: float | None = None
        self._rounds = 0
        self._fallbacks = 0

    def ping(self) -> str:
        return __version__

    def schedule(self, snapshot: Any, trusted: bool = True) -> Any:
        """One round. Only a ``trusted`` round — the shim's, as the server admitted it
        (:class:`SealedRounds`) — may feed the controller: apply its armed plans, be observed
        and be remembered as the last round; any other round is answered and forgotten."""
        started = time.perf_counter()
        controller = self.controller if trusted else None
        armed = controller.armed() if controller is not None else None
        try:
            with collection_paused():
                state = to_state(snapshot)
                decisions = self._explain_kept(plan_round(state, self.config, armed))
                reply = to_reply(decisions)
        except SchedulingError as error:  # a malformed snapshot: the shim's input, not a crash
            raise _refused(f"round {getattr(snapshot, 'round', '?')}", error) from error
        except Exception as error:  # never let one round kill the service
            log.exception("round %s failed", getattr(snapshot, "round", "?"))
            raise wire().BrainError(f"brain failed on this snapshot: {error}") from error
        seconds = time.perf_counter() - started
        if state.timeout_ms is not None and seconds * 1000 > state.timeout_ms:
            log.warning(
                "round %s took %.1f s, longer than the shim waits for a reply (%d ms): the "
                "shim has fallen back to DefaultScheduler for this round, so none of its "
                "decisions is recorded",
                state.round,
                seconds,
                state.timeout_ms,
            )
            return reply
        if not trusted:
            return reply
        self._remember(state, decisions, seconds)
        if self.controller is not None:
            self.controller.observe_round(state, decisions)
        return reply

    def status(self, secret: str | None = "") -> str:
        """The last round as JSON (:func:`scheduler_py.scheduling.status.status_document`)."""
        self._authorise_read("status", secret)
        with self._lock:  # the state and the decisions are replaced, never changed
            state, decisions, seconds = self._last_state, self._last_decisions, self._last_seconds
            rounds, fallbacks = self._rounds, self._fallbacks
        document = status_document(state, decisions, seconds, __version__, rounds, fallbacks)
        document["trigger"] = self._trigger_state()
        return json.dumps(document, sort_keys=True, default=str)

    def _trigger_state(self) -> dict[str, Any]:
        if self.controller is None:
            return {"controller": False, "enabled": False, "paused": False,
                    "paused_topologies": {}}  # fmt: skip
        try:
            return dict(self.controller.trigger_state())
        except Exception as error:  # status must answer whatever the controller does
            log.exception("the controller's trigger state failed")
            return {"controller": True, "error": f"{type(error).__name__}: {error}"}

    def set_trigger_paused(self, paused: bool, topology: str = "", secret: str = "") -> str:
        controller = self._controller()
        verb = "pause" if paused else "resume"
        self._authorise(f"trigger {verb}" + (f" {topology}" if topology else ""), secret)
        try:
            state = controller.set_trigger_paused(bool(paused), topology or None)
        except EXPECTED_INPUT_ERRORS as error:
            raise _refused(f"trigger {verb}", error) from error
        except Exception as error:
            log.exception("trigger %s failed", verb)
            raise wire().BrainError(
                f"trigger {verb} failed: {type(error).__name__}: {error}"
            ) from error
        return json.dumps(state, sort_keys=True, default=str)

    def replan(
        self, topology: str, algorithm: str, dry_run: bool, secret: str = "", params: str = ""
    ) -> str:
        """A re-plan (``--dry-run``, the dashboard's what-if, or one that applies): at most
        :data:`MAX_REPLANS_AT_ONCE` at a time, parameters within :func:`_params`' caps, and
        the controller plans within ``reconfig/controller.py``'s ``REPLAN_BUDGET_SECS``."""
        if dry_run:
            self._authorise_read(f"replan --dry-run {topology}", secret)
        controller = self._controller()
        if not dry_run:
            self._authorise(f"replan {topology}", secret)
        if not self._replans.acquire(blocking=False):
            raise _refused(
                f"replan {topology}",
                OperatorError(
                    f"busy: {MAX_REPLANS_AT_ONCE} re-plans are running already (the most at "
                    "once, so they cannot slow the scheduling rounds down); try again shortly"
                ),
            )
        try:
            parsed = _params(params)
            report = controller.replan(topology, algorithm or "", bool(dry_run), parsed or None)
        except EXPECTED_INPUT_ERRORS as error:
            raise _refused(f"replan {topology}", error) from error
        except Exception as error:
            log.exception("replan %s failed", topology)
            raise wire().BrainError(f"replan failed: {type(error).__name__}: {error}") from error
        finally:
            self._replans.release()
        return json.dumps(report, sort_keys=True, default=str)

    def history(self, topology: str, secret: str | None = "") -> str:
        self._authorise_read(f"history {topology}", secret)
        controller = self._controller()
        try:
            return json.dumps(controller.history_of(topology), sort_keys=True, default=str)
        except EXPECTED_INPUT_ERRORS as error:
            raise _refused(f"history {topology}", error) from error
        except Exception as error:
            log.exception("history %s failed", topology)
            raise wire().BrainError(f"history failed: {type(error).__name__}: {error}") from error

    def prove_operator_secret(self, challenge: bytes | None) -> str:
        """Shows an operator tool that this brain holds the operator secret before it sends
        it (``scheduler_py/service/auth.py``, ``secret_proof``)."""
        shortest, longest = CHALLENGE_BYTES
        if not isinstance(challenge, bytes) or not shortest <= len(challenge) <= longest:
            found = len(challenge) if isinstance(challenge, bytes) else type(challenge).__name__
            expected = f"expected a challenge of {shortest} to {longest} bytes, found {found}"
            raise _refused("prove_operator_secret", OperatorError(expected))
        if self.operator_secret is None:
            raise wire().BrainError(
                "this brain has no operator secret configured (start it with `scheduler-py "
                "serve --nimbus HOST:PORT`), so it cannot prove one"
            )
        return self.operator_secret.proof(challenge)

    def _authorise(self, call: str, secret: str | None) -> None:
        expected = self.operator_secret
        if expected is not None and expected.admits(secret):
            return
        found = "none" if not secret else "a different one"
        log.warning("refused `%s`: wrong or missing operator secret (found %s)", call, found)
        if expected is None:
            raise wire().BrainError(
                f"`{call}` changes a running topology and this brain has no operator secret "
                "configured, so it refuses every such call (start it with `scheduler-py serve`)"
            )
        raise wire().BrainError(
            f"`{call}` changes a running topology and needs the operator secret: expected the "
            f"one in {expected.source} (or ${SECRET_ENV}), found {found}; run it on the "
            "brain's host as the brain's user, or pass --secret-file PATH"
        )

    def _authorise_read(self, call: str, secret: str | None) -> None:
        """Nothing, unless :attr:`reads_need_secret`: then the operator secret or a refusal
        that says so (``needs_operator_secret``, which the tools answer with the secret once
        the brain proved it holds it, ``scheduler_py/service/client.py``)."""
        expected = self.operator_secret
        if not self.reads_need_secret or (expected is not None and expected.admits(secret)):
            return
        found = "none" if not secret else "a different one"
        log.warning(
            "refused `%s` from a peer without the operator secret (found %s): this brain "
            "answers reads only with it (--require-auth-reads)",
            call,
            found,
        )
        _connection.warned = True
        source = expected.source if expected is not None else "the brain's secret file"
        raise wire().BrainError(
            f"`{call}` needs the operator secret: this brain was started with "
            "--require-auth-reads, so every call but ping needs it; expected the one in "
            f"{source} (or ${SECRET_ENV}), found {found}. scheduler-py's tools send it, once "
            "the brain proved it holds it, when they can read it: run them as the brain's "
            "user on its host, or pass --secret-file PATH",
            needs_operator_secret=True,
        )

    def _controller(self) -> ReconfigurationPort:
        if self.controller is None:
            raise wire().BrainError(
                "this brain runs without the reconfiguration controller; start "
                "`scheduler-py serve` with --nimbus HOST:PORT"
            )
        return self.controller

    def _explain_kept(self, decisions: list[TopologyDecision]) -> list[TopologyDecision]:
        """A kept topology keeps the reason of the plan that placed it (the shim shows it as
        the topology status, which should not flip to "nothing to do" one round later)."""
        with self._lock:
            result = []
            for decision in decisions:
                placed = self.last_records.get(decision.topology_id)
                if decision.decision == KEEP and placed and placed.decision == PLACE:
                    decision = replace(
                        decision, algorithm=placed.algorithm, reason=f"{placed.reason} (unchanged)"
                    )
                result.append(decision)
            return result

    def _remember(
        self, state: ClusterState, decisions: Sequence[TopologyDecision], seconds: float
    ) -> None:
        with self._lock:
            self._last_state = state
            # a kept topology shows the decision that placed it (its last other than KEEP)
            self._last_decisions = {
                d.topology_id: self.last_records.get(d.topology_id, d) if d.decision == KEEP else d
                for d in decisions
            }
            self._last_seconds = seconds
            self._rounds += 1
            self._fallbacks += count_fallbacks(decisions)
            logged = []
            for decision in decisions:
                if decision.decision == KEEP:
                    continue
                changed = self.last_records.get(decision.topology_id)
                self.last_records[decision.topology_id] = decision
                if (
                    changed is None
                    or changed.decision != decision.decision
                    or changed.placement != decision.placement
                ):
                    log.info(
                        "round %s: %s %s (%s)",
                        state.round,
                        decision.decision,
                        decision.topology_id,
                        decision.reason,
                    )
                logged.append(decision)
            if self._plan_writer is not None:
                self._plan_writer.append(
                    logged,
                    {
                        "round": state.round,
                        "timestamp_ms": state.timestamp_ms,
                        "round_seconds": seconds,
                    },
                )

    def flush_plan_log(self, timeout: float = FLUSH_SECS) -> bool:
        """Wait until the plan log holds every decision recorded so far (tests, shutdown)."""
        return self._plan_writer is None or self._plan_writer.flush(timeout)

    def close(self) -> None:
        """Write what the plan log still has queued and stop its writer."""
        if self._plan_writer is not None:
            self._plan_writer.close()


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic garbage collection while a call is decoded, answered and its answer written:
    a round allocates tens of thousands of short-lived objects (the snapshot, the model, the
    reply), which would trigger collections that also walk everything the service keeps;
    reference counting frees them anyway, and the collector runs again, as usual, once the
    answer is out (:meth:`BrainServer.handle` pauses it once a complete request is in, never
    for a partial one — ``scheduler_py/service/bounded.py``;
    :meth:`BrainHandler.schedule` pauses it too, for callers without the server). The first
    of overlapping pauses turns it back on."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


EXPECTED_INPUT_ERRORS = (OperatorError, SchedulingError)
"""what a caller's input can make an RPC refuse: a malformed snapshot
(:class:`~scheduler_py.model.errors.InvalidProblemError`), an unknown algorithm, a request the
controller cannot carry out; one WARNING each, never a traceback (that is for bugs)"""


def _refused(call: str, error: Exception) -> Exception:
    """The reply error for ``call`` refused on its input, logged as one WARNING line that says
    what was expected (the error's message does) and what the caller is told."""
    message = str(error) or type(error).__name__
    log.warning("refused %s: %s (answered with BrainError)", call, message)
    _connection.warned = True
    return wire().BrainError(message)


_connection = threading.local()
"""per connection thread of :class:`BrainServer`: ``warned``, whether one of its calls was
already refused with a WARNING (its connection then gets no second one)"""


MAX_REPLANS_AT_ONCE = 2
"""re-plans (dry runs and what-ifs included) the brain runs at once; more are refused"""
MAX_PARAMS_CHARS = 4096
MAX_PARAMS = 32
MAX_PARAM_STRING = 256
MAX_PARAM_LIST = 64


def _params(text: str | None) -> dict[str, Any]:
    """``replan``'s algorithm parameters: a JSON object, or empty for none; at most
    :data:`MAX_PARAMS_CHARS` characters and :data:`MAX_PARAMS` entries, each a number, a
    boolean, null, a string of at most :data:`MAX_PARAM_STRING` characters, or a flat list of
    at most :data:`MAX_PARAM_LIST` of those (no nesting)."""
    if not text:
        return {}
    if len(text) > MAX_PARAMS_CHARS:
        raise OperatorError(
            f"replan: expected the parameters as a JSON object of at most {MAX_PARAMS_CHARS} "
            f"characters, found {len(text)}"
        )
    try:
        value = json.loads(text)
    except ValueError as error:
        raise OperatorError(
            f"replan: expected the parameters as a JSON object, found {text[:80]!r} ({error})"
        ) from error
    if not isinstance(value, dict):
        raise OperatorError(
            f"replan: expected the parameters as a JSON object, found {type(value).__name__}"
        )
    if len(value) > MAX_PARAMS:
        raise OperatorError(f"replan: expected at most {MAX_PARAMS} parameters, found {len(value)}")
    for name, item in value.items():
        items = item if isinstance(item, list) else [item]
        if isinstance(item, list) and len(item) > MAX_PARAM_LIST:
            raise OperatorError(
                f"replan: parameter {name[:40]!r}: expected a list of at most "
                f"{MAX_PARAM_LIST} values, found {len(item)}"
            )
        for entry in items:
            if isinstance(entry, dict | list) or (
                isinstance(entry, str) and len(entry) > MAX_PARAM_STRING
            ):
                raise OperatorError(
                    f"replan: parameter {name[:40]!r}: expected a number, a boolean, null, a "
                    f"string of at most {MAX_PARAM_STRING} characters or a flat list of them, "
                    f"found {type(entry).__name__} {str(entry)[:40]!r}"
                )
    return value


class BrainServer(TThreadedServer):
    """thriftpy2's threaded server, with one WARNING line per connection that does not speak
    the protocol (garbage, a port scanner, an HTTP client) instead of a traceback each.

    A call that decodes but carries a malformed snapshot (or another refused input) gets its
    WARNING from the handler (``_refused``) and is answered with ``BrainError``; whatever its
    connection sends after it gets no second one.

    A connection is *bad* when bytes arrived that did not make a complete call: a frame
    header that announces no frame, a frame cut short by the peer's close or by the client
    timeout, a frame that is not a binary-protocol ``SchedulerBrain`` message. A peer that
    closes (or goes idle until the timeout) between calls, without sending anything more, ends
    its session normally — the shim's connections and port probes do that.
    """

    def __init__(self, *args: Any, bounds: Bounds | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bounds = bounds or Bounds()
        self.slots = ConnectionSlots(self.bounds.max_connections)

    def serve(self) -> None:
        """thriftpy2's accept loop, with the connection cap and the accept back-off
        (``scheduler_py/service/bounded.py``)."""
        self.trans.listen()
        backoff = AcceptBackoff()
        while not self.closed:
            try:
                client = self.trans.accept()
            except OSError as error:
                if self.closed:
                    break
                backoff.failed(error)
                continue
            backoff.succeeded()
            if not self.slots.take(_peer(client)):
                client.close()
                continue
            thread = threading.Thread(target=self._serve_connection, args=(client,))
            thread.daemon = self.daemon
            try:
                thread.start()
            except RuntimeError as error:  # no thread left: like a full connection cap
                self.slots.give_back()
                client.close()
                log.warning("closed a connection: cannot start its thread (%s)", error)

    def _serve_connection(self, client: Any) -> None:
        try:
            self.handle(client)
        finally:
            self.slots.give_back()

    def handle(self, client: Any) -> None:
        peer = _peer(client)
        idle = getattr(self.trans, "client_timeout", None)
        counted = GuardedTransport(
            client, self.bounds.max_frame_bytes, self.bounds.call_deadline_secs, idle
        )
        itrans = self.itrans_factory.get_transport(counted)
        otrans = self.otrans_factory.get_transport(counted)
        iprot = self.iprot_factory.get_protocol(itrans)
        oprot = self.oprot_factory.get_protocol(otrans)
        answered = 0  # bytes received up to the end of the last call this connection completed
        _connection.warned = False
        try:
            while True:
                counted.wrote = False
                with ExitStack() as call:
                    # from a complete request until its answer is out (collection_paused);
                    # not while a request trickles in, nor between calls
                    counted.on_request = lambda: call.enter_context(collection_paused())
                    self.processor.process(iprot, oprot)
                answered = counted.received
        except Exception as error:
            pending = counted.received - answered
            if pending == 0 and isinstance(error, _SESSION_END):
                log.debug("connection from %s ended (%s)", peer, type(error).__name__)
            elif _connection.warned:  # one WARNING per bad input: its refused call had it
                log.debug("dropped the connection from %s after its refused call (%s)", peer,
                          _reason(error))  # fmt: skip
            elif counted.wrote:  # the call was read and answered; the answer did not get out
                log.warning(
                    "the connection from %s went away before the answer to its call was sent (%s)",
                    peer,
                    _reason(error),
                )
            else:
                log.warning(
                    "dropped a connection from %s that is not a SchedulerBrain call (%d byte(s) "
                    "that make no complete call; %s); expected framed binary Thrift as the shim "
                    "sends (scheduler.thrift)",
                    peer,
                    pending,
                    _reason(error),
                )
            if pending or _connection.warned:  # a FIN, not a reset, for what it still sends
                discard_pending(client)
        finally:
            itrans.close()
            otrans.close()


_SESSION_END = (TTransportException, ConnectionError, TimeoutError)
"""how a connection's reads end when its peer closes, resets or stays silent"""


def _reason(error: Exception) -> str:
    """What ended a connection, in a few words (thriftpy2's transport errors carry their text
    in ``message`` or, for "No frame.", in ``type``)."""
    if isinstance(error, TTransportException):
        if error.type == TTransportException.END_OF_FILE:
            return "the peer closed before its frame was complete"
        words = [v for v in (error.message, error.type) if isinstance(v, str) and v]
        return f"transport: {words[0] if words else 'closed'}"
    return f"{type(error).__name__}: {str(error)[:200]}"


def _peer(client: Any) -> str:
    try:
        host, port = client.sock.getpeername()[:2]
        return f"{host}:{port}"
    except (AttributeError, OSError):
        return "an unknown peer"


class SealedRounds:
    """The handler as the Thrift port sees it: ``schedule`` is admitted by
    :class:`~scheduler_py.service.shim_auth.ShimAuth` first (a refused round is one WARNING and
    a ``BrainError``; an unauthenticated round the operator allows reaches the handler as not
    trusted, and is answered unsealed); the answer to a sealed round is sealed for it
    (``shim_auth.seal_reply``); every other call goes to the handler unchanged.

    Without a ``ShimAuth`` (a handler served by a test or a benchmark, never by ``serve``)
    every round is trusted and a sealed one is opened without a check."""

    def __init__(self, handler: Any, shim_auth: ShimAuth | None) -> None:
        self.handler = handler
        self.shim_auth = shim_auth

    def schedule(self, snapshot: Any, sealed_snapshot: Any = None, mac: Any = None) -> Any:
        if self.shim_auth is None:
            if sealed_snapshot is not None:
                try:
                    snapshot = open_sealed(sealed_snapshot)
                except ShimAuthError as error:
                    raise _refused("a round", error) from error
            return self.handler.schedule(snapshot)
        try:
            snapshot, trusted = self.shim_auth.admit(snapshot, sealed_snapshot, mac)
        except ShimAuthError as error:
            raise _refused("a round", error) from error
        if trusted:  # a sealed round: its answer is sealed for it (shim_auth.seal_reply)
            reply = self.handler.schedule(snapshot)
            assert self.shim_auth.key is not None and mac is not None  # admit checked both
            return seal_reply(reply, self.shim_auth.key, mac)
        if not self.shim_auth.warned_unauthenticated:
            self.shim_auth.warned_unauthenticated = True
            log.warning(
                "answering an unauthenticated round (round %s) as --allow-unauthenticated-rounds "
                "says; such rounds never drive a reconfiguration (further ones: DEBUG)",
                getattr(snapshot, "round", "?"),
            )
        return self.handler.schedule(snapshot, trusted=False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.handler, name)


def make_brain_server(
    handler: Any,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    client_timeout_ms: int = 30_000,
    shim_auth: ShimAuth | None = None,
    bounds: Bounds | None = None,
) -> BrainServer:
    """The Thrift server of ``handler``; ``shim_auth``: who may feed its rounds
    (:class:`SealedRounds`; ``None`` only for tests and benchmarks); ``bounds``: what one peer
    can make it hold (``scheduler_py/service/bounded.py``); ``client_timeout_ms``: how long a
    connection may stay idle between calls."""
    return BrainServer(
        TProcessor(wire().SchedulerBrain, SealedRounds(handler, shim_auth)),
        TServerSocket(host=host, port=port, client_timeout=client_timeout_ms),
        iprot_factory=TBinaryProtocolFactory(),
        itrans_factory=TFramedTransportFactory(),
        daemon=True,
        bounds=bounds,
    )


def serve(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    config: RoundConfig | None = None,
    plan_log: Path | None = None,
    controller: ReconfigurationPort | None = None,
    operator_secret: OperatorSecret | None = None,
    shim_auth: ShimAuth | None = None,
    reads_need_secret: bool = False,
) -> None:
    """Serve forever (until SIGTERM/SIGINT). ``shim_auth`` ``None``: a new
    :class:`ShimAuth` with the default key file (created when missing), refusing unsealed
    rounds. ``reads_need_secret`` (``serve --require-auth-reads``): every call but ``ping`` and
    ``prove_operator_secret`` needs a credential — the shim's seal or ``operator_secret`` —
    so unsealed rounds cannot be allowed as well."""
    if shim_auth is None:
        shim_auth = ShimAuth(ensure_key())
    if reads_need_secret and shim_auth.allow_unauthenticated:
        raise ValueError(
            "--require-auth-reads refuses every call without a credential, so it cannot be "
            "combined with --allow-unauthenticated-rounds; expected one of the two"
        )
    handler = BrainHandler(
        config or RoundConfig(), plan_log, controller, operator_secret, reads_need_secret
    )
    server = make_brain_server(handler, host, port, shim_auth=shim_auth)
    log.info(
        "scheduler-py brain %s listening on %s:%d (default algorithm %s)",
        __version__,
        host,
        port,
        handler.config.default_algorithm,
    )
    if shim_auth.key is not None:
        log.info(
            "rounds must be sealed with the shim key in %s (Nimbus's scheduler.brain.key.file)%s",
            shim_auth.key.source,
            "; unauthenticated rounds are answered but never drive a reconfiguration"
            if shim_auth.allow_unauthenticated
            else "",
        )
    if reads_need_secret and operator_secret is not None:
        log.info(
            "reads (status, history, dry runs) need the operator secret in %s as well "
            "(--require-auth-reads); only ping and prove_operator_secret answer anyone",
            operator_secret.source,
        )
    measured = handler.config.costs
    if measured is not None:
        log.info("measured costs from %s", getattr(measured, "hosts", type(measured).__name__))
        measured.connect()
    if controller is not None:
        controller.start()
        log.info("reconfiguration controller on (%s)", controller.describe())
        if operator_secret is not None:
            log.info(
                "operator calls that change a topology need the secret in %s",
                operator_secret.source,
            )
    try:
        server.serve()
    finally:
        handler.close()
        if controller is not None:
            controller.stop()
        if measured is not None:
            measured.close()
