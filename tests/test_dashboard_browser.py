"""The dashboard's pages in a real browser (headless Chromium, tests/dashboard_browser.py)
over a real in-process brain: every page's JavaScript runs without a console error and shows
what the brain, its plan log and the measured aggregate hold; the what-if page's dry run shows
the candidate's numbers beside the running placement. No Storm cluster needed
(tests/cluster/test_dashboard_browser_cluster.py runs the same pages against one)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.cli.dashboard import ThriftBrain
from scheduler_py.dashboard.app import create_app
from scheduler_py.dashboard.planlog import PlanLogFile
from scheduler_py.dashboard.sources import Sources
from scheduler_py.reconfig.controller import Controller
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.auth import ensure_secret
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.wire import wire
from tests import dashboard_browser
from tests.brain_server import serve_brain
from tests.dashboard_fakes import TOKEN, FakeAggregates, FakeBrain, aggregate
from tests.snapshots import snapshot, supervisor, wordcount
from tests.test_reconfig_controller import FakeNimbus, ScriptedLive

REASON = dashboard_browser.missing()
pytestmark = pytest.mark.skipif(REASON is not None, reason=str(REASON))


@dataclass(frozen=True)
class Served:
    """The in-process brain and the dashboard over it (the ``dashboard`` fixture)."""

    base: str
    """the dashboard's base URL (its token is ``TOKEN``)"""
    placed_on: Counter[str]
    """how many executors the brain placed on each supervisor"""
    brain: ThriftBrain
    """a Thrift client of the brain, to read its status beside the browser"""
    plan_log: Path


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    """The dashboard over a thriftpy2 brain that has placed word count (``wc-1``, 11
    executors spread round-robin over s1..s3 in racks r0/r1) in one round, with a plan log and
    a measured aggregate; yields :class:`Served`."""
    state = tmp_path_factory.mktemp("brain")
    controller = Controller(
        RoundConfig(),
        TriggerConfig(drain_poll_secs=0.01, apply_timeout_secs=1.0, warmup_secs=0),
        History(state / "history"),
        FakeNimbus(),
        live=ScriptedLive(),
    )
    plan_log = state / "brain-plans.jsonl"
    handler = BrainHandler(RoundConfig("even"), plan_log, controller, ensure_secret())
    racks = {f"s{i}": f"r{i % 2}" for i in (1, 2, 3)}
    empty = [supervisor(sid, rack=rack) for sid, rack in racks.items()]
    now_ms = int(time.time() * 1000)
    first = snapshot(empty, [wordcount()], round_=41)
    first.timestamp_ms = now_ms - 10_000
    (plan,) = handler.schedule(first).plans
    assert plan.decision == wire().Decision.PLACE, plan.reason
    # the next round sees the assignment Storm made from the plan (the brain keeps it)
    owners: dict[str, dict[int, str]] = {sid: {} for sid in racks}
    for placed in plan.placements:
        owners[placed.supervisor_id][placed.port] = "wc-1"
    current = [
        (p.executor.task_start, p.executor.task_end, p.supervisor_id, p.port)
        for p in plan.placements
    ]
    placed_on = Counter(p.supervisor_id for p in plan.placements)  # 10 % CPU per executor
    sups = [
        supervisor(sid, owners=owners[sid], used_cpu=10.0 * placed_on[sid], rack=rack)
        for sid, rack in racks.items()
    ]
    second = snapshot(sups, [wordcount(current=current, needs_scheduling=False)], round_=42)
    second.timestamp_ms = now_ms
    handler.schedule(second)
    assert handler.flush_plan_log(), "the plan log writer did not write rounds 41-42 in 10 s"
    server, address = serve_brain(handler)
    measured = aggregate() | {"computed_at_ms": int(time.time() * 1000) - 5000}
    brain = ThriftBrain(address, lambda: ensure_secret().value)
    sources = Sources(brain, PlanLogFile(plan_log), FakeAggregates({"wc-1": measured}), TOKEN)
    with dashboard_browser.serve(create_app(sources)) as base:
        yield Served(base, placed_on, brain, plan_log)
    server.close()


@pytest.fixture(scope="module")
def visit(dashboard, tmp_path_factory):
    shots = dashboard_browser.screenshot_dir(tmp_path_factory.mktemp("screenshots"))
    with dashboard_browser.chromium() as driver:
        yield dashboard_browser.Visit(driver, dashboard.base, shots)


def _no_console_errors(visit, page):
    assert visit.errors[page] == [], f"{page}: the browser console logged {visit.errors[page]}"


def test_cluster_page_shows_supervisors_racks_cpu_and_the_topology(visit, dashboard):
    placed_on = dashboard.placed_on
    rows = visit.cluster(supervisors=3, topology="wc")
    assert [(r[0], r[1]) for r in rows] == [("s1", "r1"), ("s2", "r0"), ("s3", "r1")]
    # slots used / free, declared CPU used, measured CPU (aggregate(): split 7.5 + spout 5 on s1)
    assert [r[3] for r in rows] == ["1 / 3", "1 / 3", "1 / 3"]
    assert [r[5] for r in rows] == [f"{10 * placed_on[s]}" for s in ("s1", "s2", "s3")]
    assert rows[0][6] == "12.5"
    assert "last round 42" in visit.text("#brain")
    _no_console_errors(visit, "cluster")


def test_topology_page_draws_the_placement_graph_and_the_heatmap(visit):
    shown = visit.topology("wc", executors=11)
    assert shown["graph"] == {"executors": 11, "workers": 3, "hosts": 3, "edges": 3, "nested": 11}
    assert shown["graph_painted"]
    assert "wc-1: PLACE by even, 11 executors on 3 of 3 workers" in shown["summary"]
    assert "Traffic and CPU measured: aggregate of 6 windows" in shown["summary"]
    measured = {r[2]: r[5] for r in shown["rows"]}
    assert (measured["10-10"], measured["7-7"], measured["6-6"]) == ("5", "7.5", "2")
    _no_console_errors(visit, "topology")


def test_whatif_of_a_throughput_replan_shows_both_predicted_rates(visit):
    shown = visit.whatif("wc", "throughput")
    dashboard_browser.check_whatif(shown, running_algorithm="even", algorithm="throughput")
    assert shown["answer"]["proposal"]["objective"] == "throughput"
    _no_console_errors(visit, "whatif")


def test_decisions_page_lists_the_brains_plan_log(visit):
    items = visit.decisions(expect="wc-1")
    assert any("plan wc-1" in item and "by even" in item for item in items), items
    _no_console_errors(visit, "decisions")


def test_whatif_dry_run_shows_the_candidate_beside_the_running_placement(visit):
    shown = visit.whatif("wc", "td")
    dashboard_browser.check_whatif(shown, running_algorithm="even", algorithm="td")
    proposal = shown["answer"]["proposal"]
    assert proposal["workers_after"] < proposal["workers_before"] == 3
    assert proposal["interworker_after"] < proposal["interworker_before"]
    assert shown["status"] == "dry run: wc by td"
    _no_console_errors(visit, "whatif")


def test_algorithms_page_lists_the_registry(visit):
    rows = visit.algorithms(list(registry.algorithms()))
    assert all(row[1] for row in rows), "every algorithm names its paper"
    _no_console_errors(visit, "algorithms")


def test_apply_needs_the_token_then_the_page_follows_the_reconfiguration(visit):
    refused = visit.apply("wc", "td", token="wrong", until="")
    assert refused["status"].startswith("401: applying plans needs the header"), refused
    assert refused["progress"] == []
    # the browser reports the refused request itself, and nothing else
    (logged,) = [e for e in visit.console() if e.startswith("SEVERE")]
    assert "/api/v1/topologies/wc/apply" in logged and "status of 401" in logged, logged
    # the brain's controller runs it over a scripted Nimbus; no scheduling round follows in
    # this test, so the new plan never shows up and the controller rolls it back
    shown = visit.apply("wc", "td", token=TOKEN, until="rolled_back")
    assert shown["status"].startswith("applying: wc by td"), shown
    (item,) = shown["progress"]
    assert "reconfiguration" in item and "trigger operator" in item, item
    assert "states accepted → draining" in item, item
    visit.errors["apply"] = [e for e in visit.console() if e.startswith("SEVERE")]
    _no_console_errors(visit, "apply")
    timeline = visit.decisions(expect="rolled_back")
    # newest first: the reconfiguration, then the brain's placing plan
    assert "reconfiguration" in timeline[0] and "rolled_back" in timeline[0], timeline
    assert any(" plan wc-1: PLACE by even" in t for t in timeline[1:]), timeline
    _no_console_errors(visit, "decisions")


def _brain_trigger(served: Served) -> dict:
    """The trigger's state as the brain's status answers it (not through the dashboard)."""
    return dict(served.brain.status()["trigger"])


def test_decisions_page_pauses_and_resumes_the_trigger_with_the_token(visit, dashboard):
    assert _brain_trigger(dashboard)["paused"] is False
    try:
        shown = visit.open_trigger()
        assert shown["line"] == "automatic trigger: running", shown
        assert (shown["button"], shown["action"], shown["enabled"]) == (
            "Pause automatic trigger",
            "pause",
            True,
        ), shown
        # a wrong token: refused with the reason beside the button, nothing changes
        refused = visit.toggle_trigger("wrong")
        assert refused["note"].startswith("401: pausing or resuming the trigger needs"), refused
        assert refused["line"] == "automatic trigger: running", refused
        assert _brain_trigger(dashboard)["paused"] is False
        (logged,) = [e for e in visit.console() if e.startswith("SEVERE")]
        assert "/api/v1/trigger/pause" in logged and "status of 401" in logged, logged

        paused = visit.toggle_trigger(TOKEN)
        assert paused["note"].startswith("paused"), paused
        assert paused["line"] == "automatic trigger: paused for every topology", paused
        assert (paused["button"], paused["action"]) == ("Resume automatic trigger", "resume")
        state = _brain_trigger(dashboard)
        assert state["paused"] is True and state["paused_since"] is not None, state
        # a fresh load shows it from the brain's status, not from the click's answer
        reloaded = visit.open_trigger()
        assert reloaded["line"] == "automatic trigger: paused for every topology", reloaded
        assert reloaded["button"] == "Resume automatic trigger", reloaded

        resumed = visit.toggle_trigger(TOKEN)
        assert resumed["note"].startswith("resumed"), resumed
        assert resumed["line"] == "automatic trigger: running", resumed
        assert resumed["button"] == "Pause automatic trigger", resumed
        state = _brain_trigger(dashboard)
        assert state["paused"] is False and state["paused_topologies"] == {}, state
        # the next poll (from the status, read again after the change) agrees
        visit.wait(
            lambda: visit.js("return document.getElementById('timeline').children.length") > 0,
            "the timeline",
        )
        assert visit.trigger()["line"] == "automatic trigger: running"
        visit.errors["trigger"] = [e for e in visit.console() if e.startswith("SEVERE")]
        _no_console_errors(visit, "trigger")
    finally:  # the other tests here expect a running trigger
        dashboard.brain.set_trigger_paused(False, None)


def test_without_a_token_the_trigger_and_apply_buttons_are_off(visit, dashboard, tmp_path):
    read_only = Sources(dashboard.brain, PlanLogFile(dashboard.plan_log))
    with dashboard_browser.serve(create_app(read_only)) as base:
        page = dashboard_browser.Visit(visit.driver, base, tmp_path)
        shown = page.open_trigger()
        assert shown["line"] == "automatic trigger: running", shown
        assert not shown["enabled"] and not shown["token_enabled"], shown
        assert "read-only" in shown["note"] and "--token-file" in shown["note"], shown
        fetched = page.requests_on_click("trigger-toggle")
        assert [url for url in fetched if "/trigger/" in url] == [], fetched
        assert page.trigger() == shown
        assert _brain_trigger(dashboard)["paused"] is False
        page.errors["decisions"] = [e for e in page.console() if e.startswith("SEVERE")]
        _no_console_errors(page, "decisions")

        page.open("whatif", "/whatif")
        page.wait(lambda: "wc" in page.options("wf-topology"), "wc to choose from")
        assert page.js("return document.getElementById('wf-apply').disabled") is True
        assert "read-only" in page.text("#whatif-form"), page.text("#whatif-form")
        fetched = page.requests_on_click("wf-apply")
        assert [url for url in fetched if "/apply" in url] == [], fetched
        page.errors["whatif"] = [e for e in page.console() if e.startswith("SEVERE")]
        _no_console_errors(page, "whatif")


@pytest.fixture()
def fake(tmp_path):
    """A dashboard over the fake brain of tests/dashboard_fakes.py, to take it away."""
    brain = FakeBrain()
    with dashboard_browser.serve(create_app(Sources(brain))) as base:
        yield base, brain


def _only_failed_loads(visit, status: int) -> None:
    """Every SEVERE console entry since the last look is the browser reporting an API answer
    with ``status`` (the page handled it): nothing else, no script error."""
    severe = [e for e in visit.console() if e.startswith("SEVERE")]
    unexpected = [e for e in severe if f"status of {status}" not in e or "/api/v1/" not in e]
    assert unexpected == [], unexpected


def test_pages_say_when_the_brain_cannot_be_reached(visit, fake, tmp_path):
    base, brain = fake
    brain.down = True
    down = dashboard_browser.Visit(visit.driver, base, tmp_path)
    down.open("cluster", "/")
    down.wait(lambda: down.text("#health") == "brain: unreachable", "the health to say so")
    down.wait(lambda: "cannot be reached" in down.text("#brain"), "the cluster panel to say so")
    assert "fake-brain:9627" in down.text("#brain")
    _only_failed_loads(down, 503)
    down.open("topology", "/topology/wc")
    down.wait(lambda: "cannot be reached" in down.text("#summary"), "the topology page to say so")
    assert down.text("#health") == "brain: unreachable"
    _only_failed_loads(down, 503)


def test_pages_keep_showing_the_last_status_marked_stale(visit, fake, tmp_path):
    base, brain = fake
    stale = dashboard_browser.Visit(visit.driver, base, tmp_path)
    stale.open("cluster", "/")
    stale.wait(lambda: len(stale.rows("supervisors")) == 2, "the fake brain's 2 supervisors")
    assert stale.text("#health") == "brain: ok"
    brain.down = True
    stale.wait(lambda: stale.text("#health") == "brain: stale", "the next poll to mark it stale")
    assert [r[0] for r in stale.rows("supervisors")] == ["s1", "s2"]
    assert [r[0] for r in stale.rows("topologies")] == ["wc"]
    assert [e for e in stale.console() if e.startswith("SEVERE")] == []
