"""``scheduler-py replan`` / ``history`` against a real thriftpy2 brain (in-process), whose
controller talks to a scripted Nimbus (the real-cluster test drives a real one)."""

from __future__ import annotations

import json
import socket

import pytest

from scheduler_py.cli.operator import history_main, render_history, replan_main
from scheduler_py.reconfig.controller import Controller
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.auth import SECRET_ENV, ensure_secret
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.wire import wire
from tests.brain_server import serve_brain
from tests.snapshots import snapshot, supervisor, wordcount
from tests.test_reconfig_controller import FakeNimbus, ScriptedLive

SPREAD = [(t, t, f"s{(t - 1) % 3 + 1}", 6700) for t in range(1, 12)]


def brain_with_controller(history_dir, supervisors, round_=None):
    """A brain with a reconfiguration controller over a scripted Nimbus that has scheduled
    word count (spread over ``supervisors``) once; returns (handler, nimbus)."""
    nimbus = FakeNimbus()
    controller = Controller(
        RoundConfig(),
        TriggerConfig(drain_poll_secs=0.01, apply_timeout_secs=1.0, warmup_secs=0),
        History(history_dir),
        nimbus,
        live=ScriptedLive(),
    )
    handler = BrainHandler(RoundConfig(), controller=controller, operator_secret=ensure_secret())
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    handler.schedule(
        snapshot(supervisors, [topo], **({} if round_ is None else {"round_": round_}))
    )
    return handler, nimbus


@pytest.fixture()
def brain(tmp_path):
    supervisors = [supervisor(f"s{i}", owners={6700: "wc-1"}) for i in (1, 2, 3)]
    handler, nimbus = brain_with_controller(tmp_path, supervisors)
    server, address = serve_brain(handler)
    yield address, nimbus, tmp_path
    server.close()


def test_dry_run_prints_the_plan_and_touches_nothing(brain, capsys):
    address, nimbus, _ = brain
    assert replan_main(["wc", "--algorithm", "td", "--dry-run", "--brain", address]) == 0
    out = capsys.readouterr().out
    assert "algorithm td" in out and "<- moves" in out
    assert "workers: 3 -> 1" in out and "restarted:" in out
    assert "inter-worker traffic" in out and "predicted gain" in out
    assert nimbus.calls == []


def test_replan_follows_the_reconfiguration_to_its_end(brain, capsys):
    address, nimbus, state = brain
    # no scheduling rounds follow in this test, so the plan never takes effect: rolled back
    assert replan_main(["wc", "--algorithm", "td", "--brain", address, "--timeout", "30"]) == 1
    out = capsys.readouterr().out
    assert "started" in out and "draining" in out and "rolled_back" in out
    assert nimbus.calls == ["deactivate", "rebalance 0", "activate"]
    assert history_main(["wc", "--brain", address]) == 0
    assert "rolled_back" in capsys.readouterr().out
    assert history_main(["wc", "--state-dir", str(state), "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert entries[-1]["state"] == "rolled_back" and entries[-1]["trigger"] == "operator"


def test_unknown_topology_is_refused_with_the_running_ones(brain, capsys):
    address, _, _ = brain
    with pytest.raises(SystemExit) as stop:
        replan_main(["nope", "--brain", address])
    assert stop.value.code == 1
    assert "no running topology named 'nope'" in capsys.readouterr().err


def test_brain_without_controller_says_how_to_enable_it(capsys):
    handler = BrainHandler(RoundConfig())
    server, address = serve_brain(handler)
    try:
        with pytest.raises(SystemExit):
            history_main(["wc", "--brain", address])
        assert "--nimbus" in capsys.readouterr().err
    finally:
        server.close()


def test_unreachable_brain_is_a_clear_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SystemExit, match="cannot reach the brain"):
        history_main(["wc", "--brain", f"127.0.0.1:{port}"])


def test_render_history_shows_declines_with_numbers():
    text = render_history(
        [
            {
                "started": 0,
                "trigger": "change",
                "state": "declined",
                "reason": "gain too small",
                "numbers": {"interworker_before": 10.0, "interworker_after": 9.9},
                "trigger_detail": "measured costs changed by 30%",
                "states": ["declined"],
            }
        ]
    )
    assert "declined" in text and "inter-worker 10 -> 9.9" in text and "changed by 30%" in text
    assert render_history([]) == "no reconfiguration decisions recorded"


def test_replan_without_the_operator_secret_is_refused_and_changes_nothing(
    brain, capsys, monkeypatch, tmp_path
):
    address, nimbus, _ = brain
    missing = tmp_path / "elsewhere" / "operator.secret"
    with pytest.raises(SystemExit) as stop:
        replan_main(["wc", "--algorithm", "td", "--brain", address, "--secret-file", str(missing)])
    assert "no operator secret found" in str(stop.value) and str(missing) in str(stop.value)
    monkeypatch.setenv(SECRET_ENV, "not-the-brains-secret")
    with pytest.raises(SystemExit) as stop:
        replan_main(["wc", "--algorithm", "td", "--brain", address])
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert "needs the operator secret" in err and "found a different one" in err
    assert nimbus.calls == []
    # a dry run changes nothing and needs no secret
    assert replan_main(["wc", "--algorithm", "td", "--dry-run", "--brain", address]) == 0


def test_a_brain_without_a_secret_refuses_every_changing_call(capsys):
    handler = BrainHandler(RoundConfig(), controller=object())  # type: ignore[arg-type]
    with pytest.raises(wire().BrainError) as refused:
        handler.replan("wc", "td", False, "anything")
    assert "no operator secret configured" in refused.value.message
