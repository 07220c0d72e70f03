"""What one client can make the dashboard spend (scheduler_py/dashboard/limits.py): body
size, JSON nesting, what-ifs in flight, a what-if's time and its search parameters."""

from __future__ import annotations

import http.client
import json
import threading
import time

import pytest
from werkzeug.serving import make_server

from scheduler_py.dashboard.app import create_app
from scheduler_py.dashboard.inputs import PARAM_CAPS
from scheduler_py.dashboard.limits import MAX_BODY_BYTES, MAX_WHATIF_IN_FLIGHT, WhatIfGate
from scheduler_py.dashboard.planlog import PlanLogFile
from scheduler_py.dashboard.sources import Sources
from tests.dashboard_fakes import TOKEN, Clock, FakeAggregates, FakeBrain, aggregate

WHATIF = "/api/v1/topologies/wc/whatif"
BODY = {"algorithm": "td", "params": {"key": "rs"}}
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _app(tmp_path, brain=None):
    brain = brain or FakeBrain()
    sources = Sources(
        brain, PlanLogFile(tmp_path / "plans.jsonl"), FakeAggregates({"wc-1": aggregate()}),
        TOKEN, Clock(),
    )  # fmt: skip
    return create_app(sources), sources, brain


def test_a_20_mb_body_is_413_with_a_json_error(tmp_path):
    app, _, brain = _app(tmp_path)
    client = app.test_client()
    padded = json.dumps(BODY | {"pad": "x" * (20 * 1024 * 1024)})
    for path, headers in [(WHATIF, {}), ("/api/v1/trigger/pause", AUTH), ("/api/v1/cluster", {})]:
        response = client.post(path, data=padded, content_type="application/json", headers=headers)
        assert response.status_code == 413, (path, response.status_code)
        assert "413" in response.get_json()["error"], path
    assert brain.calls == [] and brain.trigger_calls == []


def test_a_real_server_refuses_a_20_mb_body_before_reading_it(tmp_path):
    app, _, brain = _app(tmp_path)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=10)
        connection.putrequest("POST", WHATIF)
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(20 * 1024 * 1024))
        connection.endheaders(b'{"algorithm": "td", "pad": "')  # the rest never comes
        response = connection.getresponse()  # answered without the other 20 MB
        assert response.status == 413
        assert "at most" in json.loads(response.read())["error"]
        connection.close()
    finally:
        server.shutdown()
        thread.join(10)
    assert brain.calls == []


@pytest.mark.parametrize("depth", [9, 30_000])
def test_deeply_nested_json_is_a_clear_400_not_a_500(tmp_path, depth):
    app, _, brain = _app(tmp_path)
    client = app.test_client()
    nested = "[" * depth + "]" * depth
    assert len(nested) < MAX_BODY_BYTES
    for path, headers in [(WHATIF, {}), ("/api/v1/trigger/pause", AUTH)]:
        response = client.post(path, data=nested, content_type="application/json", headers=headers)
        assert response.status_code == 400, (path, response.status_code)
        data = response.get_json()
        assert data["field"] == "body" and "nested at most 8 levels" in data["expected"], data
    assert brain.calls == [] and brain.trigger_calls == []


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path):
    app, _, brain = _app(tmp_path)
    brackets = '[[[[[[[[[[[[{{{{{{{{{{\\"]]]'
    body = {"algorithm": "td", "params": {"key": brackets}}
    response = app.test_client().post(WHATIF, json=body)
    assert response.status_code == 200, response.get_json()
    assert brain.calls == [("wc", "td", {"key": brackets}, True)]


@pytest.mark.parametrize(
    ("algorithm", "param"),
    [("auto", "seconds"), ("optimal", "time_limit"), ("tdls", "max_evaluations")],
)
def test_search_parameters_of_a_whatif_are_capped(tmp_path, algorithm, param):
    app, _, brain = _app(tmp_path)
    client = app.test_client()
    for value in (PARAM_CAPS[param] * 1000, "1e999"):
        body = {"algorithm": algorithm, "params": {param: value}}
        response = client.post(WHATIF, json=body)
        assert response.status_code == 400, (value, response.get_json())
        assert response.get_json()["field"] == f"params.{param}"
    over = {"algorithm": algorithm, "params": {param: PARAM_CAPS[param] + 1}}
    data = client.post(WHATIF, json=over).get_json()
    assert data["expected"] == f"at most {PARAM_CAPS[param]:g} (the dashboard's cap)", data
    assert brain.calls == []
    at_cap = {"algorithm": algorithm, "params": {param: PARAM_CAPS[param]}}
    assert client.post(WHATIF, json=at_cap).status_code == 200
    assert len(brain.calls) == 1


class BlockingBrain(FakeBrain):
    """A brain whose re-plans run until released."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.running = 0
        self.changed = threading.Condition()

    def replan(self, topology, algorithm, params, dry_run):
        with self.changed:
            self.running += 1
            self.changed.notify_all()
        try:
            self.release.wait(30)
            return super().replan(topology, algorithm, params, dry_run)
        finally:
            with self.changed:
                self.running -= 1
                self.changed.notify_all()

    def wait_running(self, count: int, timeout: float = 10.0) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.running == count, timeout), self.running


def _post_in_thread(app, results):
    def post():
        response = app.test_client().post(WHATIF, json=BODY)
        results.append((response.status_code, dict(response.headers), response.get_json()))

    thread = threading.Thread(target=post, daemon=True)
    thread.start()
    return thread


def test_whatifs_beyond_the_cap_get_429_with_retry_after(tmp_path):
    brain = BlockingBrain()
    app, _, _ = _app(tmp_path, brain)
    results: list = []
    first = [_post_in_thread(app, results) for _ in range(MAX_WHATIF_IN_FLIGHT)]
    brain.wait_running(MAX_WHATIF_IN_FLIGHT)
    extra: list = []
    late = _post_in_thread(app, extra)
    late.join(5)
    try:
        assert not late.is_alive(), "the what-if over the cap waited instead of being refused"
        status, headers, data = extra[0]
        assert status == 429 and int(headers["Retry-After"]) > 0
        assert f"{MAX_WHATIF_IN_FLIGHT} what-if(s) are already running" in data["error"]
    finally:
        brain.release.set()
        for thread in [*first, late]:
            thread.join(10)
    assert sorted(r[0] for r in results) == [200] * MAX_WHATIF_IN_FLIGHT
    brain.wait_running(0)
    assert app.test_client().post(WHATIF, json=BODY).status_code == 200  # slots freed


def test_a_whatif_over_its_time_budget_is_504_and_keeps_its_slot(tmp_path):
    brain = BlockingBrain()
    app, sources, _ = _app(tmp_path, brain)
    sources.whatif = WhatIfGate(in_flight=1, budget_secs=0.3)
    client = app.test_client()
    started = time.monotonic()
    results: list = []
    thread = _post_in_thread(app, results)
    thread.join(5)
    try:
        assert not thread.is_alive(), "the what-if outlived its budget"
        status, headers, data = results[0]
        assert status == 504 and "budget of 0.3s" in data["error"] and headers["Retry-After"]
        assert time.monotonic() - started < 5
        # the brain still works on it: the slot stays taken until it answers
        assert client.post(WHATIF, json=BODY).status_code == 429
    finally:
        brain.release.set()
    brain.wait_running(0)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # the slot is released just after the brain answers
        response = client.post(WHATIF, json=BODY)
        if response.status_code != 429:
            break
        time.sleep(0.01)
    assert response.status_code == 200
