"""Expected input errors on the brain's RPCs (scheduler_py/service/server.py): a call the brain
refuses because of what it was sent — a snapshot with a required field unset, replan parameters
that are not a JSON object, an operator request the controller cannot carry out — is answered
with ``BrainError`` and logged as exactly one WARNING line naming what was expected, never as
an ERROR with a traceback (that is kept for bugs: ``test_an_unexpected_failure_keeps_its_
traceback``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler_py.scheduling.interfaces import OperatorError
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.wire import wire
from tests.brain_server import port_of, serve_brain
from tests.snapshots import snapshot, supervisor, wordcount
from tests.test_fuzz_monitoring import logged
from tests.test_service import _client

SERVER_LOG = "scheduler_py.service.server"

SNAPSHOT_REQUIRED = ("round", "timestamp_ms", "supervisors")
SUPERVISOR_REQUIRED = (
    "id",
    "slots",
    "total_cpu",
    "total_memory_mb",
    "available_cpu",
    "available_memory_mb",
)


def _server_lines(caught: list[logging.LogRecord]) -> tuple[list[str], list[logging.LogRecord]]:
    """(WARNING messages of the service, records that are errors or carry a traceback)."""
    warnings = [
        r.getMessage() for r in caught if r.name == SERVER_LOG and r.levelno == logging.WARNING
    ]
    bad = [r for r in caught if r.exc_info or r.levelno >= logging.ERROR]
    return warnings, bad


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    server, address = serve_brain(BrainHandler(RoundConfig("even")))
    yield port_of(address)
    server.close()


def _refused_over_the_wire(port: int, sent: Any) -> tuple[str, list[str]]:
    """Send ``sent`` as a real Thrift ``schedule`` call; the reply error and the warnings."""
    client = _client(port)
    try:
        with logged() as caught:
            with pytest.raises(wire().BrainError) as refused:
                client.schedule(sent)
            assert client.ping(), "the connection must stay usable after a refused call"
    finally:
        client.close()
    warnings, bad = _server_lines(caught)
    assert bad == [], [f"{r.levelname} {r.getMessage()}" for r in bad]
    return refused.value.message, warnings


@pytest.mark.parametrize("unset", SNAPSHOT_REQUIRED)
def test_a_snapshot_without_a_required_field_gets_one_warning_and_an_error_reply(port, unset):
    sent = snapshot([supervisor("sup-a")], [wordcount()])
    setattr(sent, unset, None)
    message, warnings = _refused_over_the_wire(port, sent)
    assert unset in message and "malformed cluster snapshot" in message, message
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("refused round") and unset in warnings[0], warnings
    assert message in warnings[0], "the warning says what the shim is told"


@pytest.mark.parametrize("unset", SUPERVISOR_REQUIRED)
def test_a_supervisor_without_a_required_field_gets_one_warning(port, unset):
    broken = supervisor("sup-a")
    setattr(broken, unset, None)
    message, warnings = _refused_over_the_wire(port, snapshot([broken], [wordcount()]))
    assert unset in message, message
    assert len(warnings) == 1 and unset in warnings[0], warnings


def test_a_schedule_call_with_no_snapshot_names_what_was_expected():
    handler = BrainHandler(RoundConfig("even"))
    with logged() as caught, pytest.raises(wire().BrainError) as refused:
        handler.schedule(None)
    warnings, bad = _server_lines(caught)
    assert bad == []
    assert "expected a ClusterSnapshot" in refused.value.message
    assert len(warnings) == 1, warnings


@dataclass
class _RefusingController:
    """A controller whose operator calls fail the way a caller's input makes them fail."""

    calls: list[str] = field(default_factory=list)

    def armed(self) -> None:
        return None

    def observe_round(self, state: Any, decisions: Any) -> None:
        self.calls.append("observe_round")

    def replan(self, topology: str, algorithm: str, dry_run: bool, params: Any) -> Any:
        raise OperatorError(f"no running topology {topology!r}: expected one Nimbus lists")

    def history_of(self, topology: str) -> Any:
        raise OperatorError(f"no history for {topology!r}")

    def set_trigger_paused(self, paused: bool, topology: str | None) -> Any:
        raise OperatorError(f"no running topology {topology!r}")

    def trigger_state(self) -> Any:
        return {}


def _one_warning(call: Any, expected: str) -> None:
    with logged() as caught, pytest.raises(wire().BrainError) as refused:
        call()
    warnings, bad = _server_lines(caught)
    assert bad == [], [f"{r.levelname} {r.getMessage()}" for r in bad]
    assert expected in refused.value.message, refused.value.message
    assert len(warnings) == 1 and expected in warnings[0], warnings


def test_operator_calls_refused_on_their_input_get_one_warning_each():
    handler = BrainHandler(RoundConfig("even"), controller=_RefusingController())
    _one_warning(lambda: handler.replan("ghost", "", True), "no running topology 'ghost'")
    _one_warning(lambda: handler.history("ghost"), "no history for 'ghost'")
    _one_warning(
        lambda: handler.replan("wc", "", True, params="[1, 2]"),
        "expected the parameters as a JSON object, found list",
    )
    _one_warning(
        lambda: handler.replan("wc", "", True, params="{not json"),
        "expected the parameters as a JSON object",
    )


def test_an_unexpected_failure_keeps_its_traceback():
    """The other side of the rule: a bug (here a controller that breaks) is still logged with
    its traceback, so it is not mistaken for a caller's mistake."""

    class Broken(_RefusingController):
        def history_of(self, topology: str) -> Any:
            raise KeyError("a bug")

    handler = BrainHandler(RoundConfig("even"), controller=Broken())
    with logged() as caught, pytest.raises(wire().BrainError):
        handler.history("wc")
    assert [r for r in caught if r.exc_info and r.levelno >= logging.ERROR]


def test_a_round_with_no_supervisor_leaves_its_topologies_to_storm_with_a_reason():
    """An empty supervisor list is a real cluster state (every supervisor down), not a
    malformed snapshot: each topology is left to Storm with the reason, and nothing crashes."""
    handler = BrainHandler(RoundConfig("even"))
    with logged() as caught:
        reply = handler.schedule(snapshot([], [wordcount()]))
    _, bad = _server_lines(caught)
    assert bad == [], [f"{r.levelname} {r.getMessage()}" for r in bad]
    (plan,) = reply.plans
    assert plan.decision == wire().Decision.LEAVE_TO_STORM
    assert plan.reason.startswith("cannot place topology: no supervisor"), plan.reason
