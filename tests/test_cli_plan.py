"""``scheduler-py plan`` and ``algorithms`` end to end, through the real console script."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from scheduler_py.model.errors import InvalidProblemError
from scheduler_py.model.io_json import load_document

PROBLEM = {
    "nodes": [{"id": "n1", "cpu": 100.0, "slots": 4}, {"id": "n2", "cpu": 100.0, "slots": 4}],
    "topologies": [
        {
            "id": "t1",
            "workers": 2,
            "components": [
                {"id": "spout", "parallelism": 5, "cpu": 50.0},
                {"id": "split", "parallelism": 2, "cpu": 40.0},
            ],
            "edges": [{"from": "spout", "to": "split", "traffic": 12.5}],
        }
    ],
}


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scheduler_py.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_plan_writes_assignment_and_summary(tmp_path):
    problem = tmp_path / "problem.json"
    problem.write_text(json.dumps(PROBLEM))
    out = tmp_path / "placement.json"
    result = _run("plan", "--algorithm", "even", "--input", str(problem), "--output", str(out))
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    assert document["assignment"] == {
        "t1": {"spout": ["n1", "n2", "n1", "n2", "n1"], "split": ["n1", "n2"]}
    }
    for key in ("imc_gain", "internode_traffic", "max_node_load", "seconds"):
        assert key in document["summary"]
    assert document["summary"]["imc_gain"] == pytest.approx(6.25)
    assert "φ=6.25" in result.stderr and "nodes used=2" in result.stderr
    # all 90 % of CPU fits one 100 % node: everything could be kept, even keeps half
    assert document["summary"]["bound"] == pytest.approx(12.5)
    assert document["summary"]["gap"] == pytest.approx(0.5)
    assert document["topologies"]["t1"]["summary"]["gap"] == pytest.approx(0.5)
    assert document["topologies"]["t1"]["summary"]["bound_method"]
    assert "gap ≤ 50.0% of the bound 12.5" in result.stderr


def test_plan_to_stdout_and_second_topology_sees_remaining_capacity():
    problem = json.loads(json.dumps(PROBLEM))
    second = json.loads(json.dumps(PROBLEM["topologies"][0]))
    second["id"] = "t2"
    # even puts 3 spouts + 1 split (50 %) on n1 for each topology: n1 ends exactly full
    problem["topologies"].append(second)
    result = _run("plan", "-a", "even", "-i", "-", stdin=json.dumps(problem))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert set(document["assignment"]) == {"t1", "t2"}
    assert document["summary"]["max_node_load"] == pytest.approx(100.0)
    third = json.loads(json.dumps(second))
    third["id"] = "t3"
    problem["topologies"].append(third)  # n1 is full now: even must fail, not overload it
    result = _run("plan", "-a", "even", "-i", "-", stdin=json.dumps(problem))
    assert result.returncode == 65  # bad input data (scheduler_py/cli/exit_codes.py)
    assert "topology t3: needs 90.0% CPU in total but the cluster has 20.0%" in result.stderr


def test_infeasible_problem_exits_non_zero_naming_resource():
    problem = json.loads(json.dumps(PROBLEM))
    problem["topologies"][0]["components"][0]["cpu"] = 1000.0
    result = _run("plan", "-a", "even", "-i", "-", stdin=json.dumps(problem))
    assert result.returncode != 0
    assert "component spout needs 200.0% CPU per executor" in result.stderr
    assert result.stdout == ""


def test_unknown_algorithm_and_bad_json_are_clear_errors():
    result = _run("plan", "-a", "nope", "-i", "-", stdin=json.dumps(PROBLEM))
    assert result.returncode == 2 and "unknown algorithm 'nope'" in result.stderr
    result = _run("plan", "-a", "even", "-i", "-", stdin="{not json")
    assert result.returncode == 65 and "problem file is not JSON" in result.stderr
    with pytest.raises(InvalidProblemError, match="topologies/0/components/0/parallelism"):
        bad = json.loads(json.dumps(PROBLEM))
        bad["topologies"][0]["components"][0]["parallelism"] = 0
        load_document(json.dumps(bad))


def test_measured_costs_naming_unknown_executors_are_rejected():
    bad = json.loads(json.dumps(PROBLEM))
    bad["topologies"][0]["executor_cpu"] = {"spout#9": 1.0}
    result = _run("plan", "-a", "even", "-i", "-", stdin=json.dumps(bad))
    assert result.returncode == 65 and "unknown executor(s) ['spout#9']" in result.stderr


def test_algorithms_lists_registered_names():
    result = _run("algorithms")
    assert result.returncode == 0
    assert result.stdout.startswith("even") or "\neven" in result.stdout
