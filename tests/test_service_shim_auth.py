"""Only the shim can feed the brain's controller (scheduler_py/service/shim_auth.py): a round
must be sealed with the shim key; a forged, unsealed, wrongly sealed, stale or replayed round
is refused over real Thrift and never reaches the controller."""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any

import pytest
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.utils import serialize

from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.client import brain_client
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.shim_auth import CONTEXT, ShimAuth, ShimKey, ensure_key, open_reply
from scheduler_py.service.wire import wire
from tests.brain_server import serve_brain
from tests.snapshots import snapshot, supervisor, wordcount

KEY = ShimKey(b"k" * 43, "the test's key")
SUPERVISORS = [supervisor("sup-a", (6700, 6701)), supervisor("sup-b", (6710, 6711))]

# the same vector storm_plugin/src/test/.../SnapshotSignerTest.java checks
VECTOR_KEY = b"scheduler-py test key"
VECTOR_BYTES = bytes(range(16))
VECTOR_MAC = "cdca80f9545e656593eae24794d05d107c8e84a4912e9253a4f71e8391e8efd1"


class _RecordingController:
    """Records every call a round makes on the ReconfigurationPort."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def armed(self) -> dict[str, Any]:
        self.calls.append("armed")
        return {}

    def observe_round(self, state: Any, decisions: Any) -> None:
        self.calls.append(f"observe_round {state.round}")


def _round(round_: int, stamp_ms: int | None = None) -> Any:
    value = snapshot(SUPERVISORS, [wordcount()], round_=round_)
    value.timestamp_ms = int(time.time() * 1000) if stamp_ms is None else stamp_ms
    return value


def _sealed(value: Any, key: ShimKey = KEY) -> tuple[bytes, bytes]:
    data = serialize(value, TBinaryProtocolFactory())
    return data, key.mac(data)


@pytest.fixture
def brain():
    controller = _RecordingController()
    handler = BrainHandler(RoundConfig("even"), controller=controller)  # type: ignore[arg-type]
    server, address = serve_brain(handler, shim_auth=ShimAuth(KEY))
    client = brain_client(address, timeout_ms=10_000)
    try:
        yield client, controller, handler
    finally:
        client.close()
        server.close()
        handler.close()


def test_the_mac_is_hmac_sha256_over_the_context_and_the_bytes():
    key = ShimKey(VECTOR_KEY, "vector")
    expected = hmac.new(VECTOR_KEY, CONTEXT + VECTOR_BYTES, hashlib.sha256).hexdigest()
    assert key.mac(VECTOR_BYTES).hex() == expected == VECTOR_MAC


def test_a_forged_unsealed_round_is_refused_and_never_reaches_the_controller(brain):
    client, controller, handler = brain
    with pytest.raises(wire().BrainError) as refused:
        client.schedule(_round(1))
    assert "unauthenticated round" in refused.value.message
    assert "scheduler.brain.key.file" in refused.value.message
    assert controller.calls == []
    assert handler.status() and handler._rounds == 0


def test_a_round_sealed_with_another_key_is_refused(brain):
    client, controller, _ = brain
    data, mac = _sealed(_round(1), ShimKey(b"x" * 43, "an impostor's key"))
    with pytest.raises(wire().BrainError) as refused:
        client.schedule(None, data, mac)
    assert "MAC does not match" in refused.value.message
    assert controller.calls == []


def test_a_tampered_sealed_snapshot_is_refused(brain):
    client, controller, _ = brain
    data, mac = _sealed(_round(1))
    with pytest.raises(wire().BrainError):
        client.schedule(None, data[:-1] + bytes([data[-1] ^ 1]), mac)
    assert controller.calls == []


def test_the_shims_sealed_round_feeds_the_controller_once_and_a_replay_is_refused(brain):
    client, controller, _ = brain
    data, mac = _sealed(_round(7))
    reply = open_reply(client.schedule(None, data, mac), KEY, mac)  # sealed for this round
    assert reply.plans[0].decision == wire().Decision.PLACE
    assert controller.calls == ["armed", "observe_round 7"]
    with pytest.raises(wire().BrainError) as refused:
        client.schedule(None, data, mac)
    assert "replayed" in refused.value.message
    assert controller.calls == ["armed", "observe_round 7"]


def test_a_stale_sealed_round_is_refused(brain):
    client, controller, _ = brain
    data, mac = _sealed(_round(1, stamp_ms=int((time.time() - 3600) * 1000)))
    with pytest.raises(wire().BrainError) as refused:
        client.schedule(None, data, mac)
    assert "timestamp_ms" in refused.value.message
    assert controller.calls == []


def test_unauthenticated_rounds_the_operator_allows_are_answered_but_feed_nothing():
    controller = _RecordingController()
    auth = ShimAuth(KEY, allow_unauthenticated=True)
    handler = BrainHandler(RoundConfig("even"), controller=controller)  # type: ignore[arg-type]
    server, address = serve_brain(handler, shim_auth=auth)
    client = brain_client(address, timeout_ms=10_000)
    try:
        reply = client.schedule(_round(3))
        assert reply.plans[0].decision == wire().Decision.PLACE
        assert controller.calls == []  # no armed plan applied, nothing observed
        assert handler._rounds == 0 and handler.last_records == {}  # not the last round
        data, mac = _sealed(_round(4))
        client.schedule(None, data, mac)
        assert controller.calls == ["armed", "observe_round 4"]
    finally:
        client.close()
        server.close()
        handler.close()


def test_serve_creates_a_private_key_file(tmp_path):
    path = tmp_path / "conf" / "scheduler-brain.key"
    key = ensure_key(path)
    assert (path.stat().st_mode & 0o777) == 0o600
    assert ensure_key(path) == key and len(key.value) >= 43
