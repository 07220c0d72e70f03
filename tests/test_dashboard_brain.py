"""The brain's side of the dashboard: the ``status`` RPC (scheduler_py/scheduling/status.py),
``replan`` with parameters, and the dashboard's Thrift adapter (scheduler_py/cli/dashboard.py)
against a real in-process thriftpy2 brain with a controller over a scripted Nimbus."""

from __future__ import annotations

import json
import socket

import pytest

from scheduler_py.cli.dashboard import ThriftBrain
from scheduler_py.dashboard.app import create_app
from scheduler_py.dashboard.sources import Sources
from scheduler_py.scheduling.dashboard_ports import SourceUnavailable
from scheduler_py.scheduling.interfaces import OperatorError
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.wire import wire
from tests.brain_server import serve_brain
from tests.snapshots import supervisor
from tests.test_reconfig_cli import brain_with_controller


@pytest.fixture()
def brain(tmp_path):
    sups = [supervisor(f"s{i}", owners={6700: "wc-1"}, rack=f"r{i % 2}") for i in (1, 2, 3)]
    handler, nimbus = brain_with_controller(tmp_path, sups, round_=42)
    server, address = serve_brain(handler)
    yield address, nimbus
    server.close()


def test_status_before_any_round_is_empty():
    document = json.loads(BrainHandler(RoundConfig()).status())
    assert document["round"] is None and document["supervisors"] == []
    assert document["rounds_seen"] == 0 and document["fallbacks_total"] == 0


def test_status_over_thrift_has_supervisors_topologies_and_decisions(brain):
    address, _ = brain
    status = ThriftBrain(address, lambda: None).status()
    assert status["round"] == 42 and status["rounds_seen"] == 1
    assert [(s["id"], s["rack"]) for s in status["supervisors"]] == [
        ("s1", "r1"),
        ("s2", "r0"),
        ("s3", "r1"),
    ]
    (topology,) = status["topologies"]
    assert (topology["id"], topology["name"]) == ("wc-1", "wc")
    assert sorted(row[0] for row in topology["current"]) == list(range(1, 12))
    assert topology["decision"]["decision"] in ("KEEP", "PLACE")
    assert status["round_seconds"] > 0


def test_replan_params_reach_the_algorithm(brain):
    address, nimbus = brain
    port = ThriftBrain(address, lambda: None)
    report = port.replan("wc", "td", {"key": "rs"}, True)
    assert report["dry_run"] and report["algorithm"] == "td"
    with pytest.raises(OperatorError, match="'key'"):
        port.replan("wc", "td", {"key": "no-such-key"}, True)
    assert nimbus.calls == []


def test_apply_without_a_secret_is_refused_before_calling_the_brain(brain):
    address, nimbus = brain
    with pytest.raises(OperatorError, match="operator secret"):
        ThriftBrain(address, lambda: None).replan("wc", "td", {}, False)
    with pytest.raises(OperatorError, match="operator secret"):
        ThriftBrain(address, lambda: "wrong").replan("wc", "td", {}, False)
    assert nimbus.calls == []


def test_malformed_params_text_is_refused_by_the_brain():
    handler = BrainHandler(RoundConfig())
    handler.controller = object()  # never reached: the parameters are checked first
    with pytest.raises(wire().BrainError) as refused:
        handler.replan("wc", "td", True, "", "[1, 2]")
    assert "expected the parameters as a JSON object, found list" in refused.value.message


def test_dashboard_over_the_real_brain(brain):
    address, nimbus = brain
    client = create_app(Sources(ThriftBrain(address, lambda: None))).test_client()
    cluster = client.get("/api/v1/cluster").get_json()
    assert cluster["brain"]["status"] == "ok" and len(cluster["supervisors"]) == 3
    detail = client.get("/api/v1/topologies/wc").get_json()
    assert detail["cost_basis"]["basis"] == "declared"
    whatif = client.post("/api/v1/topologies/wc/whatif", json={"algorithm": "td"})
    assert whatif.status_code == 200
    assert whatif.get_json()["proposal"]["workers_after"] <= 3
    assert nimbus.calls == []


def test_unreachable_brain_is_a_source_unavailable_and_a_503():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{probe.getsockname()[1]}"
    port = ThriftBrain(closed, lambda: None)
    with pytest.raises(SourceUnavailable, match=closed):
        port.status()
    response = create_app(Sources(port)).test_client().get("/api/v1/topologies")
    assert response.status_code == 503 and closed in response.get_json()["error"]
