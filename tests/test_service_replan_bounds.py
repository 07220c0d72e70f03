"""A re-plan (``--dry-run``, the dashboard's what-if) cannot exhaust the brain: capped
parameters, at most MAX_REPLANS_AT_ONCE at a time (scheduler_py/service/server.py), and the
real controller plans it within REPLAN_BUDGET_SECS (scheduler_py/reconfig/controller.py)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from scheduler_py.model.budget import Budget
from scheduler_py.reconfig import controller as controller_module
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import MAX_REPLANS_AT_ONCE, BrainHandler
from scheduler_py.service.wire import wire
from tests.snapshots import supervisor
from tests.test_reconfig_cli import brain_with_controller


class _BlockingController:
    """Every replan waits until ``release`` is set; records what it was asked."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Semaphore(0)
        self.calls: list[Any] = []

    def replan(self, topology, algorithm, dry_run, params) -> dict:
        self.calls.append(params)
        self.started.release()
        assert self.release.wait(30), "the test never released the re-plan"
        return {"topology": topology}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (json.dumps({"k": "x" * 10_000}), "at most 4096 characters"),
        (json.dumps({f"p{i}": i for i in range(40)}), "at most 32 parameters"),
        (json.dumps({"k": {"nested": 1}}), "flat list"),
        ("[" * 3000 + "]" * 3000, "at most 4096 characters"),
        (json.dumps({"k": list(range(100))}), "list of at most 64"),
    ],
    ids=["long", "many", "nested", "deep", "long-list"],
)
def test_uncapped_parameters_are_refused_before_the_controller(params, expected):
    controller = _BlockingController()
    controller.release.set()
    handler = BrainHandler(RoundConfig("even"), controller=controller)  # type: ignore[arg-type]
    with pytest.raises(wire().BrainError) as refused:
        handler.replan("wc", "td", True, "", params)
    assert expected in refused.value.message
    assert controller.calls == []
    assert handler.replan("wc", "td", True, "", json.dumps({"key": "imc_group", "n": [1, 2]}))


def test_re_plans_beyond_the_cap_are_refused_while_others_run():
    controller = _BlockingController()
    handler = BrainHandler(RoundConfig("even"), controller=controller)  # type: ignore[arg-type]
    running = [
        threading.Thread(target=handler.replan, args=("wc", "td", True, "", ""))
        for _ in range(MAX_REPLANS_AT_ONCE)
    ]
    for thread in running:
        thread.start()
    for _ in running:
        assert controller.started.acquire(timeout=10), "a re-plan did not start"
    try:
        with pytest.raises(wire().BrainError) as refused:
            handler.replan("wc", "td", True, "", "")
        assert "busy" in refused.value.message
        assert len(controller.calls) == MAX_REPLANS_AT_ONCE
    finally:
        controller.release.set()
        for thread in running:
            thread.join(10)
    assert json.loads(handler.replan("wc", "td", True, "", "")) == {"topology": "wc"}


def test_the_controller_plans_a_dry_run_within_its_budget(tmp_path, monkeypatch):
    budgets: list[Budget] = []
    real = controller_module.propose

    def recording(view, algorithm, params, hosts=None, budget=None):
        budgets.append(budget)
        return real(view, algorithm, params, hosts, budget)

    monkeypatch.setattr(controller_module, "propose", recording)
    supervisors = [supervisor(f"s{i}", owners={6700: "wc-1"}) for i in (1, 2, 3)]
    handler, _ = brain_with_controller(tmp_path, supervisors)
    report = json.loads(handler.replan("wc", "td", True, "", ""))
    assert report["dry_run"] is True
    (budget,) = budgets
    assert 0 < budget.remaining() <= controller_module.REPLAN_BUDGET_SECS
