"""The plan summary's deferred routing numbers and the plan log written after the reply
(``scheduler_py/scheduling/routing.py``, ``scheduler_py/service/plan_log.py``)."""

from __future__ import annotations

import json
import logging
import threading

from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.scheduling.routing import ROUTING_FIELDS, DeferredSummary, routing_summary
from scheduler_py.service.plan_log import PlanLogWriter
from scheduler_py.service.server import BrainHandler
from tests.snapshots import answer, snapshot, supervisor, view_of, wordcount

SUPERVISORS = [supervisor("sup-a", (6700, 6701)), supervisor("sup-b", (6710, 6711))]


class _Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> dict[str, float]:
        self.calls += 1
        return {"late": 2.0, "not asked for": 3.0}


def test_deferred_fields_are_computed_once_on_first_read_and_not_for_membership():
    compute = _Counting()
    summary = DeferredSummary({"ready": 1.0}, ("late",), compute)
    assert "late" in summary and len(summary) == 2 and list(summary) == ["ready", "late"]
    assert summary["ready"] == 1.0
    assert compute.calls == 0 and not summary.computed
    assert dict(summary) == {"ready": 1.0, "late": 2.0}
    assert summary["late"] == 2.0 and compute.calls == 1 and summary.computed
    assert "not asked for" not in summary


def test_an_optional_deferred_field_is_there_only_when_computed():
    """A field ``compute`` may leave out (a bound's reason) is not in the summary, as ``None``
    or otherwise, unless it was produced; asking for it computes."""
    compute = _Counting()
    summary = DeferredSummary({"ready": 1.0}, ("late",), compute, ("reason",))
    assert "late" in summary and compute.calls == 0  # a field always there: no computing
    assert "reason" not in summary and compute.calls == 1
    assert len(summary) == 2 and list(summary) == ["ready", "late"]
    assert dict(summary) == {"ready": 1.0, "late": 2.0}
    assert summary.get("reason", "absent") == "absent"
    produced = DeferredSummary({}, ("late",), lambda: {"late": 2.0, "reason": "why"}, ("reason",))
    assert dict(produced) == {"late": 2.0, "reason": "why"} and len(produced) == 2
    assert "reason" in produced and produced["reason"] == "why"


def test_concurrent_readers_compute_the_deferred_fields_once():
    compute = _Counting()
    summary = DeferredSummary({}, ("late",), compute)
    readers = [threading.Thread(target=lambda: summary["late"]) for _ in range(8)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    assert compute.calls == 1


def test_a_round_defers_the_routing_numbers_and_they_equal_the_direct_computation():
    state = snapshot(SUPERVISORS, [wordcount()])
    _, (decision,) = answer(state, RoundConfig("even"))
    assert decision.decision == "PLACE"
    assert isinstance(decision.summary, DeferredSummary)
    assert not decision.summary.computed, "the round itself must not compute the routing"
    direct = routing_summary(view_of(state).problem, decision.plan)
    assert all(direct[key] is not None for key in ROUTING_FIELDS)
    logged = decision.log_entry()["summary"]
    assert {key: logged[key] for key in ROUTING_FIELDS} == direct
    assert logged["imc_gain"] == decision.summary["imc_gain"]


def test_the_service_writes_the_plan_log_after_the_reply_with_the_routing_numbers(tmp_path):
    plan_log = tmp_path / "logs" / "plans.jsonl"
    handler = BrainHandler(RoundConfig("even"), plan_log)
    try:
        for round_ in (1, 2):
            other = wordcount() if round_ == 1 else wordcount(topology_id="wc-2")
            handler.schedule(snapshot(SUPERVISORS, [other], round_=round_))
        assert handler.flush_plan_log(), "the plan log writer did not catch up within 10 s"
        entries = [json.loads(line) for line in plan_log.read_text().splitlines()]
    finally:
        handler.close()
    assert [e["round"] for e in entries] == [1, 2], "lines keep the rounds' order"
    for entry in entries:
        assert entry["decision"] == "PLACE"
        assert entry["summary"]["internode_traffic_loadaware"] is not None
        assert entry["round_seconds"] > 0


class _Entry:
    def __init__(self, value: int) -> None:
        self.value = value

    def log_entry(self) -> dict[str, int]:
        return {"value": self.value}


def test_a_failed_write_is_logged_and_the_writer_carries_on(tmp_path, caplog):
    target = tmp_path / "plans.jsonl"
    target.mkdir()  # a directory where the file should be: every write fails
    writer = PlanLogWriter(target)
    with caplog.at_level(logging.ERROR, logger="scheduler_py.service.plan_log"):
        writer.append([_Entry(1)], {"round": 1})
        assert writer.flush()
    assert "could not append 1 decision(s) to the plan log" in caplog.text
    assert str(target) in caplog.text
    target.rmdir()
    writer.append([_Entry(2), _Entry(3)], {"round": 2})
    writer.close()
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert lines == [{"value": 2, "round": 2}, {"value": 3, "round": 2}]


def test_a_throughput_plans_deferred_bound_has_a_reason_only_when_the_bound_has_one(monkeypatch):
    """A throughput plan's traffic bound is computed after the reply; its summary has the keys
    it would have had computed at once: ``bound_reason`` only when the bound has a reason."""
    import scheduler_py.scheduling.round as round_module
    from scheduler_py.model.bound import TrafficBound

    state = snapshot(SUPERVISORS, [wordcount()])
    _, (decision,) = answer(state, RoundConfig("throughput"))
    assert decision.decision == "PLACE"
    assert not decision.summary.computed
    logged = decision.log_entry()["summary"]
    assert logged["bound_method"] and "bound_reason" not in logged
    assert "bound_reason" not in decision.summary
    assert set(decision.summary) == set(logged) and len(decision.summary) == len(logged)

    unbounded = TrafficBound(None, "none", "too many pairs")
    monkeypatch.setattr(round_module, "_round_bound", lambda *args: unbounded)
    _, (decision,) = answer(state, RoundConfig("throughput"))
    logged = decision.log_entry()["summary"]
    assert logged["bound_reason"] == "too many pairs" and logged["bound"] is None
    assert decision.summary["bound_reason"] == "too many pairs"
