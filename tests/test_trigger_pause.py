"""Pausing the automatic reconfiguration trigger (scheduler_py/reconfig/pause.py): the state and
its file, the controller's check loop, the brain's authenticated ``set_trigger_paused`` call and
``status``, ``scheduler-py trigger``, and the dashboard's POST /api/v1/trigger/pause|resume."""

from __future__ import annotations

import json
import time

import pytest

from scheduler_py.cli.operator import trigger_main
from scheduler_py.dashboard.app import create_app
from scheduler_py.dashboard.sources import Sources
from scheduler_py.reconfig.controller import Controller, ReconfigError
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.pause import FILE_NAME, TriggerPause
from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.auth import ensure_secret
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.wire import wire
from tests.brain_server import serve_brain
from tests.dashboard_fakes import TOKEN, Clock, FakeBrain
from tests.snapshots import aggregate_doc, supervisor, wordcount
from tests.test_reconfig_cli import brain_with_controller
from tests.test_reconfig_controller import FakeNimbus, ScriptedLive, _cluster, _round

# -- the state ----------------------------------------------------------------------------


def test_pauses_survive_a_restart_when_kept_in_the_state_dir(tmp_path):
    pause = TriggerPause(tmp_path)
    pause.pause("wc")
    assert pause.paused("wc") and not pause.paused("other")
    again = TriggerPause(tmp_path)
    assert again.paused("wc") and not again.paused("other")
    again.pause(None)
    assert TriggerPause(tmp_path).paused("other")
    again.resume(None)  # clears every pause
    state = TriggerPause(tmp_path).state()
    assert not state["paused"] and state["paused_topologies"] == {}
    assert state["kept_in"] == str(tmp_path / FILE_NAME)


def test_without_a_state_dir_pauses_are_in_memory_only(tmp_path):
    pause = TriggerPause(None)
    pause.pause("wc")
    assert pause.state()["kept_in"] == "memory" and list(tmp_path.iterdir()) == []
    pause.resume("wc")
    assert not pause.paused("wc")


def test_an_unreadable_pause_file_keeps_everything_paused(tmp_path):
    (tmp_path / FILE_NAME).write_text("{not json")
    pause = TriggerPause(tmp_path)
    assert pause.paused("anything") and pause.state()["paused"]
    pause.resume(None)
    assert not TriggerPause(tmp_path).paused("anything")


# -- the controller -------------------------------------------------------------------------


def _watched_controller(tmp_path):
    """A controller whose change trigger fires at the second aggregate (and is declined: word
    count on one worker has nothing better), as in test_reconfig_controller."""
    from scheduler_py.monitoring.measured import StaticAggregates

    measured = StaticAggregates()
    controller = Controller(
        RoundConfig(costs=measured),
        TriggerConfig(warmup_secs=0, change_windows=1, decline_backoff_secs=0),
        History(tmp_path),
        FakeNimbus(),
        live=ScriptedLive(),
        references=lambda tid, agg: None,
    )
    topology = wordcount(current=[(t, t, "s1", 6700) for t in range(1, 12)], needs_scheduling=False)
    _round(controller, _cluster(topology))
    now_ms = int(time.time() * 1000)
    step = iter(range(1000))

    def check(change: float) -> None:
        i = next(step)
        measured.aggregates[topology.id] = aggregate_doc(topology.id, now_ms + i, change)
        controller.check_once()

    return controller, check


@pytest.mark.parametrize("topology", [None, "wc", "wc-1"])
def test_the_trigger_does_not_fire_while_paused_and_fires_after_resume(tmp_path, topology):
    controller, check = _watched_controller(tmp_path)
    state = controller.set_trigger_paused(True, topology)
    assert state["paused"] == (topology is None)
    assert list(state["paused_topologies"]) == ([] if topology is None else ["wc"])
    for change in (0.0, 0.9, 0.9, 0.9):
        check(change)
    assert controller.history_of("wc") == []
    controller.set_trigger_paused(False, topology)
    for change in (0.0, 0.9):
        check(change)
    assert [e["trigger"] for e in controller.history_of("wc")] == ["change"]


def test_pausing_another_topology_leaves_this_one_watched(tmp_path):
    controller, check = _watched_controller(tmp_path)
    controller.pause.pause("other")  # e.g. paused before a restart, not running now
    for change in (0.0, 0.9):
        check(change)
    assert len(controller.history_of("wc")) == 1


def test_pausing_an_unknown_topology_is_refused_with_the_running_ones(tmp_path):
    controller, _ = _watched_controller(tmp_path)
    with pytest.raises(ReconfigError, match="running: wc"):
        controller.set_trigger_paused(True, "nope")
    controller.pause.pause("gone")  # a pause left over from a topology that went away
    assert "gone" not in controller.set_trigger_paused(False, "gone")["paused_topologies"]


# -- the brain's call and status -------------------------------------------------------------


@pytest.fixture()
def handler(tmp_path):
    supervisors = [supervisor(f"s{i}", owners={6700: "wc-1"}) for i in (1, 2, 3)]
    handler, _ = brain_with_controller(tmp_path, supervisors)
    return handler


def test_the_call_needs_the_operator_secret(handler):
    for wrong in ("", "not-the-secret"):
        with pytest.raises(wire().BrainError, match="needs the operator secret"):
            handler.set_trigger_paused(True, "", wrong)
    assert json.loads(handler.status())["trigger"]["paused"] is False
    state = json.loads(handler.set_trigger_paused(True, "", ensure_secret().value))
    assert state["paused"] is True
    trigger = json.loads(handler.status())["trigger"]
    assert (trigger["controller"], trigger["enabled"], trigger["paused"]) == (True, True, True)


def test_a_brain_without_controller_or_secret_refuses(tmp_path):
    with pytest.raises(wire().BrainError, match="--nimbus"):
        BrainHandler(RoundConfig()).set_trigger_paused(True, "", "x")
    assert json.loads(BrainHandler(RoundConfig()).status())["trigger"]["controller"] is False
    handler = BrainHandler(RoundConfig(), controller=object())  # type: ignore[arg-type]
    with pytest.raises(wire().BrainError, match="no operator secret configured"):
        handler.set_trigger_paused(True, "", "anything")


def test_trigger_command_pauses_and_resumes_over_thrift(handler, capsys):
    server, address = serve_brain(handler)
    try:
        assert trigger_main(["pause", "--topology", "wc", "--brain", address]) == 0
        assert "paused for wc since" in capsys.readouterr().out
        assert list(json.loads(handler.status())["trigger"]["paused_topologies"]) == ["wc"]
        assert trigger_main(["resume", "--brain", address, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["paused_topologies"] == {}
        with pytest.raises(SystemExit) as stop:
            trigger_main(["pause", "--topology", "nope", "--brain", address])
        assert (
            stop.value.code == 1 and "no running topology named 'nope'" in capsys.readouterr().err
        )
    finally:
        server.close()


def test_trigger_command_without_a_secret_says_where_it_looked(tmp_path):
    missing = tmp_path / "none" / "operator.secret"
    with pytest.raises(SystemExit, match="no operator secret found") as stop:
        trigger_main(["pause", "--brain", "127.0.0.1:1", "--secret-file", str(missing)])
    assert str(missing) in str(stop.value) and "--dry-run" not in str(stop.value)


# -- the dashboard ---------------------------------------------------------------------------


def _client(token):
    brain = FakeBrain()
    return create_app(Sources(brain, None, None, token, Clock())).test_client(), brain


@pytest.mark.parametrize("action", ["pause", "resume"])
def test_dashboard_trigger_needs_the_bearer_token(action):
    client, brain = _client(token=None)
    response = client.post(f"/api/v1/trigger/{action}")
    assert response.status_code == 403 and "--token-file" in response.get_json()["error"]
    client, brain = _client(token=TOKEN)
    for header in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        assert client.post(f"/api/v1/trigger/{action}", headers=header).status_code == 401
    assert brain.trigger_calls == []
    good = {"Authorization": f"Bearer {TOKEN}"}
    response = client.post(f"/api/v1/trigger/{action}", headers=good, json={"topology": "wc"})
    assert response.status_code == 200
    assert brain.trigger_calls == [(action == "pause", "wc")]
    assert response.get_json()["trigger"]["controller"] is True
    assert client.post(f"/api/v1/trigger/{action}", headers=good).status_code == 200
    assert brain.trigger_calls[-1] == (action == "pause", None)


@pytest.mark.parametrize(
    ("body", "field"),
    [('{"topology": 3}', "topology"), ('{"x": 1}', "x"), ("[1]", "body"), ("nope", "body")],
)
def test_dashboard_trigger_rejects_a_malformed_body(body, field):
    client, brain = _client(token=TOKEN)
    response = client.post(
        "/api/v1/trigger/pause",
        data=body,
        headers={"Authorization": f"Bearer {TOKEN}"},
        content_type="application/json",
    )
    assert response.status_code == 400 and response.get_json()["field"] == field
    assert brain.trigger_calls == []


def test_dashboard_trigger_refused_or_unreachable_brain():
    client, brain = _client(token=TOKEN)
    good = {"Authorization": f"Bearer {TOKEN}"}
    brain.refuse = "no running topology named 'x'"
    response = client.post("/api/v1/trigger/pause", headers=good, json={"topology": "x"})
    assert response.status_code == 409 and "no running topology" in response.get_json()["error"]
    brain.refuse, brain.down = None, True
    assert client.post("/api/v1/trigger/pause", headers=good).status_code == 503


def test_decisions_and_cluster_show_the_trigger_state():
    client, _ = _client(token=None)
    assert client.get("/api/v1/decisions").get_json()["trigger"]["controller"] is False
    assert client.get("/api/v1/cluster").get_json()["trigger"]["paused"] is False


class PausableBrain(FakeBrain):
    """A fake brain whose status carries the trigger state its last pause/resume left."""

    def set_trigger_paused(self, paused, topology):
        state = super().set_trigger_paused(paused, topology)
        self.document = dict(self.document) | {"trigger": state}
        return state


def test_a_pause_is_in_the_next_status_read_not_the_cached_one():
    brain = PausableBrain()
    brain.document = dict(brain.document) | {"trigger": brain.set_trigger_paused(False, None)}
    # the clock stands still: without the pause forgetting it, the cached status would stay
    client = create_app(Sources(brain, None, None, TOKEN, Clock())).test_client()
    assert client.get("/api/v1/decisions").get_json()["trigger"]["paused"] is False
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert client.post("/api/v1/trigger/pause", headers=good).status_code == 200
    assert client.get("/api/v1/decisions").get_json()["trigger"]["paused"] is True
    assert client.post("/api/v1/trigger/resume", headers=good).status_code == 200
    assert client.get("/api/v1/cluster").get_json()["trigger"]["paused"] is False


def test_the_dashboards_thrift_adapter_sends_the_secret(handler):
    from scheduler_py.cli.dashboard import ThriftBrain
    from scheduler_py.scheduling.interfaces import OperatorError

    server, address = serve_brain(handler)
    try:
        with pytest.raises(OperatorError, match="no operator secret"):
            ThriftBrain(address, lambda: None).set_trigger_paused(True, None)
        with pytest.raises(OperatorError, match="needs the operator secret"):
            ThriftBrain(address, lambda: "wrong").set_trigger_paused(True, None)
        brain = ThriftBrain(address, lambda: ensure_secret().value)
        assert brain.set_trigger_paused(True, "wc")["paused_topologies"].keys() == {"wc"}
        assert brain.status()["trigger"]["paused_topologies"].keys() == {"wc"}
        assert brain.set_trigger_paused(False, None)["paused_topologies"] == {}
    finally:
        server.close()
