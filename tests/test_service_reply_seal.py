"""The brain seals its answer to a sealed round with the shim key, bound to that round
(scheduler_py/service/shim_auth.py ``seal_reply``; the shim opens it in SnapshotSigner.open):
a reply from a peer without the key, a tampered one, or the answer to another round does not
open."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest

from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.client import brain_client
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.shim_auth import (
    REPLY_CONTEXT,
    ShimAuth,
    ShimAuthError,
    ShimKey,
    open_reply,
    seal_reply,
)
from scheduler_py.service.wire import wire
from tests.brain_server import serve_brain
from tests.test_service_shim_auth import KEY, _round, _sealed

# the same vector storm_plugin/src/test/.../SnapshotSignerTest.java checks
VECTOR_KEY = b"scheduler-py test key"
VECTOR_ROUND_MAC = bytes(range(32))
VECTOR_REPLY = bytes(range(16))
VECTOR_REPLY_MAC = "92e9aeeb772b62dbb4bb7940dc1d30da2ab273bf0b22f5de1ffbac9705c41085"


def test_the_reply_mac_is_hmac_sha256_over_the_context_the_round_mac_and_the_bytes():
    key = ShimKey(VECTOR_KEY, "the vector's key")
    mac = key.reply_mac(VECTOR_ROUND_MAC, VECTOR_REPLY)
    expected = hmac.new(VECTOR_KEY, REPLY_CONTEXT + VECTOR_ROUND_MAC + VECTOR_REPLY, hashlib.sha256)
    assert mac == expected.digest()
    assert mac.hex() == VECTOR_REPLY_MAC


@pytest.fixture
def served():
    handler = BrainHandler(RoundConfig("even"))
    server, address = serve_brain(handler, shim_auth=ShimAuth(KEY, allow_unauthenticated=True))
    client = brain_client(address, timeout_ms=10_000)
    try:
        yield client
    finally:
        client.close()
        server.close()
        handler.close()


def test_the_answer_to_a_sealed_round_is_sealed_for_that_round(served):
    data, mac = _sealed(_round(11))
    reply = served.schedule(None, data, mac)
    assert reply.plans == [] and reply.sealed_reply and reply.reply_mac
    assert reply.reply_mac == KEY.reply_mac(mac, reply.sealed_reply)
    opened = open_reply(reply, KEY, mac)
    assert opened.plans[0].decision == wire().Decision.PLACE
    assert opened.brain_version == reply.brain_version
    assert opened.sealed_reply is None and opened.reply_mac is None
    # not the answer to another round, nor under another key
    _, other_mac = _sealed(_round(12))
    with pytest.raises(ShimAuthError, match="another round"):
        open_reply(reply, KEY, other_mac)
    with pytest.raises(ShimAuthError, match="does not match"):
        open_reply(reply, ShimKey(b"x" * 43, "an impostor's key"), mac)


def test_the_answer_to_an_unauthenticated_round_is_not_sealed(served):
    reply = served.schedule(_round(13))
    assert reply.plans[0].decision == wire().Decision.PLACE
    assert reply.sealed_reply is None and reply.reply_mac is None


def _reply(plans: list[Any]) -> Any:
    return wire().ScheduleReply(plans=plans, brain_version="test")


def test_a_forged_tampered_or_unsealed_reply_does_not_open():
    _, round_mac = _sealed(_round(14))
    plan = wire().TopologyPlan(
        topology_id="wc-1", decision=wire().Decision.LEAVE_TO_STORM, placements=[],
        reason="r", algorithm="even",
    )  # fmt: skip
    sealed = seal_reply(_reply([plan]), KEY, round_mac)
    assert open_reply(sealed, KEY, round_mac).plans == [plan]
    impostor = seal_reply(_reply([plan]), ShimKey(b"y" * 43, "an impostor's key"), round_mac)
    with pytest.raises(ShimAuthError, match="does not match"):
        open_reply(impostor, KEY, round_mac)
    data = bytearray(sealed.sealed_reply)
    data[-2] ^= 1
    tampered = wire().ScheduleReply(
        plans=[], brain_version="test", sealed_reply=bytes(data), reply_mac=sealed.reply_mac
    )
    with pytest.raises(ShimAuthError, match="does not match"):
        open_reply(tampered, KEY, round_mac)
    with pytest.raises(ShimAuthError, match="found an unsealed one"):
        open_reply(_reply([plan]), KEY, round_mac)
