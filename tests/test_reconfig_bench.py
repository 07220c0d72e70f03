"""The ``reconfig_pause`` benchmark is registered, and its pure helpers (workload selection,
submit options, history entry → table row) produce the right cells. No cluster is started."""

from __future__ import annotations

import itertools
import json
from types import SimpleNamespace

import pytest

from scheduler_py.bench import cli, local_cluster, reconfig_workloads
from scheduler_py.bench.reconfig_workloads import (
    HEADERS,
    MONITOR_OPTIONS,
    WORKLOADS,
    entry_numbers,
    outcome_text,
    select_workloads,
    submit_options,
    table_row,
    traffic_note,
    workers_cell,
)
from scheduler_py.bench.registry import benchmarks
from scheduler_py.service.wire import wire

ENTRY = {
    "id": "20261121-120000-abcdef",
    "topology": "rp-wordcount",
    "state": "completed",
    "states": ["accepted", "draining", "applying", "resuming", "completed"],
    "reason": "requested by the operator",
    "numbers": {},
    "report": {
        "workers_before": 3,
        "workers_after": 1,
        "workers_restarted": 1,
        "workers_stopped": 2,
        "interworker_before": 120.0,
        "interworker_after": 0.0,
        "total_traffic": 180.0,
        "costs": "declared",
    },
    "drain_secs": 2.345,
    "applied_secs": 9.5,
    "pause_secs": 21.06,
    "workers": "all 1 worker(s) up (1 restarted)",
}


def test_registered_and_resolvable(capsys):
    info = benchmarks()["reconfig_pause"]
    assert info.paper.startswith("docs/reconfiguration.md: adaptive re-scheduling")
    assert callable(info.run)
    assert [b.name for b in cli.resolve("reconfig_pause", benchmarks())] == ["reconfig_pause"]
    assert "reconfig_pause" in {b.name for b in cli.resolve("all", benchmarks())}
    assert cli.main(["--list"]) == 0
    assert "reconfig_pause" in capsys.readouterr().out


def test_select_workloads():
    assert [w.key for w in select_workloads("wordcount,linear")] == ["wordcount", "linear"]
    assert [w.key for w in select_workloads(" linear , linear ")] == ["linear"]
    for bad in ("", "wordcount,nope", ","):
        with pytest.raises(ValueError, match="comma-separated subset"):
            select_workloads(bad)
    assert {w.project for w in WORKLOADS} == {"wordcount", "linear"}


def test_submit_options_spread_with_even_and_monitor_hooks():
    linear = select_workloads("linear")[0]
    options = submit_options(linear, "even", "0")
    assert options[0] == "scheduler.brain.algorithm=even"
    assert "scheduler.reconfig.enabled=false" in options
    assert all(hook in options for hook in MONITOR_OPTIONS)
    assert options[-1] == "linear.spout.interval.ms=0"
    assert submit_options(select_workloads("wordcount")[0], "td", "5")[-1] == (
        "wordcount.spout.interval.ms=5"
    )


def test_entry_numbers_prefers_the_report():
    numbers = entry_numbers(ENTRY)
    assert numbers["state"] == "completed"
    assert numbers["pause_secs"] == pytest.approx(21.06)
    assert numbers["drain_secs"] == pytest.approx(2.345)
    assert numbers["workers_restarted"] == 1
    assert (numbers["planned_workers_before"], numbers["planned_workers_after"]) == (3, 1)
    assert (numbers["interworker_before"], numbers["interworker_after"]) == (120.0, 0.0)
    # a trigger's entry carries the numbers of the verdict; a missing number stays None
    trigger = {"state": "rolled_back", "numbers": {"interworker_before": 5}, "pause_secs": "x"}
    got = entry_numbers(trigger)
    assert got["interworker_before"] == 5.0 and got["pause_secs"] is None
    assert entry_numbers(None) == {}


def test_table_row_of_a_completed_reconfiguration():
    result = {
        "label": "word count",
        "outcome": "completed",
        "workers_before": 3,
        "workers_after": 1,
        "rate_before": 412.34,
        "rate_after": 618.5,
        "numbers": entry_numbers(ENTRY),
    }
    row = table_row(result)
    assert len(row) == len(HEADERS)
    assert row == ["word count", "3→1", "1", "2.3", "21.1", "412.3", "618.5", "1.50×", "completed"]
    note = traffic_note(result)
    assert note is not None
    assert note == (
        "word count: predicted inter-worker traffic 120 (67%) -> 0 (0%), planned workers 3→1; "
        "costs: declared"
    )


def test_table_row_of_a_failure_is_a_row_not_a_crash():
    rolled = {
        "label": "linear",
        "outcome": "rolled_back",
        "workers_before": 3,
        "rate_before": 100.0,
        "numbers": entry_numbers(
            {"state": "rolled_back", "reason": "drain did not finish in 60s " + "x" * 80}
        ),
    }
    row = table_row(rolled)
    assert row[1] == "3→–" and row[2] == "–" and row[4] == "–" and row[6] == "–"
    assert row[7] == "–"  # no ratio without an after
    assert row[8].startswith("rolled_back: drain did not finish") and row[8].endswith("…")
    assert len(row[8]) == 48
    assert traffic_note(rolled) is None
    errored = {"label": "linear", "outcome": "error", "error": "submit: RuntimeError: boom"}
    assert table_row(errored)[1] is None
    assert table_row(errored)[-1] == "error: submit: RuntimeError: boom"
    assert outcome_text({}) == "not run"
    assert outcome_text({"outcome": "unchanged: none:\n the new plan"}) == (
        "unchanged: none: the new plan"
    )


def test_workers_cell():
    assert workers_cell(3, 1) == "3→1"
    assert workers_cell(None, 2) == "–→2"
    assert workers_cell(None, None) is None


# --- one workload's flow, against a fake cluster ------------------------------------------


class FakeCluster:
    def __init__(self, replan, history=(), status="ACTIVE", submit_error=None):
        self.replan = replan
        self.entries = list(history)
        self._status = status
        self.submit_error = submit_error
        self.calls: list[str] = []

    def submit_project(self, project, topology, spout, options):
        self.calls.append(f"submit {topology}")
        if self.submit_error:
            raise self.submit_error

    def status(self, name):
        return self._status

    def workers(self, name):
        return 3 if "replan" not in self.calls else 1

    def brain_call(self, method, *args):
        self.calls.append(method)
        if isinstance(self.replan, Exception):
            raise self.replan
        return self.replan

    def history(self, name):
        return self.entries

    def kill(self, name):
        self.calls.append(f"kill {name}")


@pytest.fixture
def flow(monkeypatch):
    clock = SimpleNamespace(now=0.0)

    def sleep(seconds):
        clock.now += seconds

    monkeypatch.setattr(
        reconfig_workloads, "time", SimpleNamespace(monotonic=lambda: clock.now, sleep=sleep)
    )
    rates = itertools.cycle([100.0, 150.0])
    monkeypatch.setattr(
        reconfig_workloads, "rate_over", lambda cluster, name, interval: (next(rates), 20)
    )
    monkeypatch.setattr(reconfig_workloads, "say", lambda text: None)
    settings = {
        "warmup": 10.0,
        "interval": 20.0,
        "algorithm": "td",
        "start": "even",
        "spout_interval_ms": "0",
        "timeout": 30.0,
    }
    workload = select_workloads("wordcount")[0]

    def run(cluster):
        return reconfig_workloads.run_workload(cluster, workload, settings)

    return SimpleNamespace(run=run)


def test_flow_completed(flow):
    plan = json.dumps({"reconfiguration_id": ENTRY["id"], **ENTRY["report"]})
    cluster = FakeCluster(plan, history=[ENTRY])
    result = flow.run(cluster)
    assert result["outcome"] == "completed" and result["error"] is None
    assert (result["rate_before"], result["rate_after"]) == (100.0, 150.0)
    assert (result["workers_before"], result["workers_after"]) == (3, 1)
    assert table_row(result)[-2:] == ["1.50×", "completed"]
    assert cluster.calls == ["submit rp-wordcount", "replan", "kill rp-wordcount"]


def test_flow_refused_rolled_back_timeout_and_submit_failure_are_rows(flow):
    refused = flow.run(FakeCluster(wire().BrainError(message="no running topology")))
    assert refused["outcome"] == "refused: no running topology"
    assert refused["rate_after"] is not None  # still running: measured after all the same

    rolled = {**ENTRY, "state": "rolled_back", "reason": "drain did not finish in 60s"}
    plan = json.dumps({"reconfiguration_id": ENTRY["id"]})
    result = flow.run(FakeCluster(plan, history=[rolled]))
    assert result["outcome"] == "rolled_back"
    assert table_row(result)[-1] == "rolled_back: drain did not finish in 60s"

    draining = {**ENTRY, "state": "draining"}
    stuck = FakeCluster(plan, history=[draining], status="INACTIVE")
    result = flow.run(stuck)
    assert result["outcome"] == "timeout (still 'draining' after 30s)"
    assert result["rate_after"] is None and "INACTIVE" in result["error"]
    assert stuck.calls[-1] == "kill rp-wordcount"

    unchanged = json.dumps({"reconfiguration": "none: the new plan is the running placement"})
    result = flow.run(FakeCluster(unchanged))
    assert result["outcome"].startswith("unchanged: none")

    broken = FakeCluster(plan, submit_error=RuntimeError("submit rp-wordcount failed"))
    result = flow.run(broken)
    assert result["outcome"] == "error" and result["error"].startswith("submit: RuntimeError")
    assert broken.calls == ["submit rp-wordcount", "kill rp-wordcount"]


def test_nimbus_queries_are_tried_again(monkeypatch, tmp_path):
    monkeypatch.setattr(local_cluster, "time", SimpleNamespace(sleep=lambda s: None))
    monkeypatch.setattr(local_cluster, "say", lambda text: None)
    cluster = local_cluster.BrainCluster(tmp_path / "cluster", aggregate=False)
    calls = []

    def status(name):
        calls.append(name)
        if len(calls) < 3:
            raise TimeoutError("timed out")
        return "ACTIVE"

    cluster.nimbus = SimpleNamespace(status=status)
    assert cluster.status("rp-linear") == "ACTIVE" and len(calls) == 3
    calls.clear()
    cluster.nimbus = SimpleNamespace(status=lambda name: (_ for _ in ()).throw(OSError("down")))
    with pytest.raises(OSError, match="down"):
        cluster.status("rp-linear")
