"""The cluster tests' stand-in brains (tests/cluster/faulty_brain.py, slow_brain.py,
recording_brain.py) answer a sealed round with a reply sealed for it, as ``serve`` does, once
``$SCHEDULER_PY_SHIM_KEY_FILE`` names the cluster's key (tests/cluster/brain_key.py): the shim
applies nothing else, so without it the faulty brain's garbage would never reach the shim's
validator."""

from __future__ import annotations

import pytest

from scheduler_py.service.client import brain_client
from scheduler_py.service.shim_auth import KEY_FILE_ENV, ensure_key, open_reply
from scheduler_py.service.wire import wire
from tests.brain_server import serve_brain
from tests.cluster.brain_key import cluster_shim_auth
from tests.cluster.faulty_brain import FaultyBrain
from tests.test_service_shim_auth import _round, _sealed


def test_without_a_key_file_the_stand_ins_answer_unsealed(monkeypatch):
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)
    assert cluster_shim_auth() is None


@pytest.mark.parametrize("mode", ["duplicate", "dead-supervisor"])
def test_the_faulty_brains_garbage_is_sealed_for_the_round(monkeypatch, tmp_path, mode):
    key = ensure_key(tmp_path / "scheduler-brain.key")
    monkeypatch.setenv(KEY_FILE_ENV, key.source)
    auth = cluster_shim_auth()
    assert auth is not None and auth.key == key
    server, address = serve_brain(FaultyBrain(mode), shim_auth=auth)  # type: ignore[arg-type]
    client = brain_client(address, timeout_ms=10_000)
    try:
        data, mac = _sealed(_round(5), key)
        (plan,) = open_reply(client.schedule(None, data, mac), key, mac).plans
        assert plan.decision == wire().Decision.PLACE and plan.reason == f"faulty: {mode}"
    finally:
        client.close()
        server.close()
