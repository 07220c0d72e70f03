"""Operator tools send the operator secret only to a brain that proved it holds it
(scheduler_py/service/client.py, ``prove_operator_secret``): an impostor on the brain's port
never receives it; the real brain gets it after the proof."""

from __future__ import annotations

from typing import Any

import pytest
from thriftpy2.thrift import TApplicationException

from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.auth import CHALLENGE_BYTES, OperatorSecret, secret_proof
from scheduler_py.service.client import BrainNotProven, call_brain
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.wire import wire
from tests.brain_server import serve_brain

SECRET = "the-operators-secret"


class _Impostor:
    """Speaks the wire contract, records every secret it is sent, and answers the proof with
    ``proof`` (``None``: as a brain older than the proof, an unknown method)."""

    def __init__(self, proof: Any) -> None:
        self.proof = proof
        self.secrets: list[str] = []

    def ping(self) -> str:
        return "impostor"

    def replan(self, topology, algorithm, dry_run, secret, params) -> str:
        self.secrets.append(secret)
        return "{}"

    def set_trigger_paused(self, paused, topology, secret) -> str:
        self.secrets.append(secret)
        return "{}"

    def prove_operator_secret(self, challenge: bytes) -> str:
        if self.proof is None:  # what a brain whose scheduler.thrift predates the proof answers
            raise TApplicationException(TApplicationException.UNKNOWN_METHOD)
        return self.proof(challenge)


class _RecordingController:
    def __init__(self) -> None:
        self.replans: list[tuple[str, bool]] = []

    def replan(self, topology, algorithm, dry_run, params) -> dict:
        self.replans.append((topology, dry_run))
        return {"topology": topology}

    def set_trigger_paused(self, paused, topology) -> dict:
        return {"paused": paused}


@pytest.mark.parametrize(
    "proof",
    [
        lambda challenge: "00" * 32,  # a guess
        lambda challenge: secret_proof("another secret", challenge),  # another brain's secret
        lambda challenge: secret_proof(SECRET, b"\0" * 32),  # a replayed answer
    ],
    ids=["guess", "other-secret", "replayed-answer"],
)
def test_an_impostor_that_cannot_prove_the_secret_never_receives_it(proof):
    impostor = _Impostor(proof)
    server, address = serve_brain(impostor)  # type: ignore[arg-type]
    try:
        with pytest.raises(BrainNotProven, match="operator secret was not sent"):
            call_brain(address, "replan", "wc", "", False, SECRET, "")
        with pytest.raises(BrainNotProven):
            call_brain(address, "set_trigger_paused", True, "", SECRET)
        assert impostor.secrets == []
        # calls without the secret need no proof
        assert call_brain(address, "replan", "wc", "", True, "", "") == "{}"
    finally:
        server.close()


def test_a_peer_without_the_proof_call_never_receives_the_secret():
    impostor = _Impostor(None)
    server, address = serve_brain(impostor)  # type: ignore[arg-type]
    try:
        with pytest.raises(BrainNotProven, match="does not know prove_operator_secret"):
            call_brain(address, "replan", "wc", "", False, SECRET, "")
        assert impostor.secrets == []
    finally:
        server.close()


def test_the_real_brain_proves_the_secret_and_then_gets_the_call():
    controller = _RecordingController()
    handler = BrainHandler(
        RoundConfig("even"),
        controller=controller,  # type: ignore[arg-type]
        operator_secret=OperatorSecret(SECRET, "the test"),
    )
    server, address = serve_brain(handler)
    try:
        assert call_brain(address, "replan", "wc", "", False, SECRET, "")
        assert controller.replans == [("wc", False)]
        with pytest.raises(wire().BrainError, match="challenge of 16 to 64 bytes"):
            call_brain(address, "prove_operator_secret", b"short")
        assert CHALLENGE_BYTES == (16, 64)
    finally:
        server.close()
        handler.close()


def test_a_brain_without_a_secret_is_not_sent_one():
    handler = BrainHandler(RoundConfig("even"), controller=_RecordingController())  # type: ignore[arg-type]
    server, address = serve_brain(handler)
    try:
        with pytest.raises(BrainNotProven, match="no operator secret configured"):
            call_brain(address, "replan", "wc", "", False, SECRET, "")
    finally:
        server.close()
        handler.close()
