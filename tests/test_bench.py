"""Benchmark harness: generator properties (notes 000 §5.1, §5.2, §4.1), table output and a
``--quick`` smoke run of every benchmark (files written, not timed)."""

from __future__ import annotations

import json
from collections import Counter

import networkx as nx
import pytest

from scheduler_py.bench import cli, report
from scheduler_py.bench.generators import (
    pipeline_instance,
    prioritisation_instance,
    scaling_instance,
    scaling_nodes,
    section73_instance,
    task_count_instance,
)
from scheduler_py.bench.registry import benchmarks
from scheduler_py.model.cost import imc_gain

SEEDS = range(300)


def _index(topology):
    return {c.id: i for i, c in enumerate(topology.components)}


def test_section73_instance_matches_the_paper_class():
    for seed in SEEDS:
        _check_section73(seed, section73_instance(seed))


def _check_section73(seed, problem):
    topology = problem.topology
    sizes = [c.parallelism for c in topology.components]
    assert sum(sizes) == 17
    assert 3 <= len(sizes) <= 7
    assert all(s >= 1 for s in sizes)
    assert sum(c.cpu for c in topology.components) == pytest.approx(500.0)
    assert all(e.cpu <= 100.0 + 1e-9 for e in topology.executors)
    # PC correlated with task count: per-task PC within the ±50 % noise band of the mean
    for c in topology.components:
        assert c.cpu / c.parallelism <= 3 * min(d.cpu / d.parallelism for d in topology.components)
    index = _index(topology)
    fanout = Counter()
    for edge in topology.edges:
        assert index[edge.source] < index[edge.target]  # acyclic: topological ids
        assert 5.0 <= edge.traffic <= 20.0
        fanout[edge.source] += 1
    assert len({(e.source, e.target) for e in topology.edges}) == len(topology.edges)
    graph = nx.DiGraph((e.source, e.target) for e in topology.edges)
    graph.add_nodes_from(c.id for c in topology.components)
    assert nx.is_directed_acyclic_graph(graph), f"seed {seed}: cycle"
    assert nx.is_weakly_connected(graph), f"seed {seed}: not connected"
    assert all(f <= 3 for f in fanout.values())
    last = topology.components[-1].id
    assert all(fanout[c.id] >= 1 for c in topology.components if c.id != last)
    assert [n.cpu for n in problem.nodes] == [100.0] * 8


def test_section73_instance_is_deterministic_per_seed():
    for seed in (0, 1, 17, 1999):
        assert section73_instance(seed) == section73_instance(seed)
    assert section73_instance(0) != section73_instance(1)


def test_section73_fanout_and_group_distribution():
    problems = [section73_instance(seed) for seed in range(2000)]
    groups = Counter(len(p.topology.components) for p in problems)
    assert set(groups) == {3, 4, 5, 6, 7}
    assert min(groups.values()) > 250  # roughly uniform (400 expected each)
    # fanout 1/2/3 at 70/25/5 % where the cap does not bind (groups with ≥ 3 successors)
    drawn = Counter()
    for p in problems:
        comps = p.topology.components
        out = Counter(e.source for e in p.topology.edges)
        for c in comps[: len(comps) - 3]:
            drawn[out[c.id]] += 1
    total = sum(drawn.values())
    assert drawn[1] / total == pytest.approx(0.70, abs=0.03)
    assert drawn[2] / total == pytest.approx(0.25, abs=0.03)
    assert drawn[3] / total == pytest.approx(0.05, abs=0.015)


def test_pipeline_instance():
    problem = pipeline_instance(groups=4, tasks=100, nodes=8, capacity=100.0, seed=3)
    topology = problem.topology
    assert [c.parallelism for c in topology.components] == [100] * 4
    assert [c.cpu for c in topology.components] == [100.0] * 4
    assert [(e.source, e.target) for e in topology.edges] == [
        ("g0", "g1"),
        ("g1", "g2"),
        ("g2", "g3"),
    ]
    assert all(9.5 <= e.traffic <= 10.5 for e in topology.edges)
    assert len(problem.nodes) == 8 and all(n.cpu == 100.0 for n in problem.nodes)
    assert problem == pipeline_instance(seed=3)
    small = pipeline_instance(nodes=10, capacity=50.0)
    assert len(small.nodes) == 10 and small.nodes[0].cpu == 50.0


@pytest.mark.parametrize("executors", [100, 1000, 10000])
def test_scaling_instance(executors):
    problem = scaling_instance(executors, seed=1)
    topology = problem.topology
    assert len(topology.executors) == executors
    assert len(problem.nodes) == scaling_nodes(executors)
    assert topology.total_cpu == pytest.approx(0.625 * 100.0 * len(problem.nodes))
    assert max(e.cpu for e in topology.executors) <= 100.0
    index = _index(topology)
    assert all(index[e.source] < index[e.target] for e in topology.edges)
    assert [c.id for c in topology.components] == sorted(c.id for c in topology.components)
    assert scaling_nodes(10000) == 500


def test_micro_scenarios():
    a = prioritisation_instance(200.0)
    assert [c.cpu for c in a.topology.components] == [40.0, 40.0, 160.0]
    assert [e.traffic for e in a.topology.edges] == [100.0, 200.0]
    assert [n.cpu for n in a.nodes] == [80.0] * 4
    b = task_count_instance(70)
    assert [c.parallelism for c in b.topology.components] == [10, 70]
    assert [c.cpu for c in b.topology.components] == [200.0, 200.0]
    assert [n.cpu for n in b.nodes] == [80.0] * 6
    # the optimum of (b) is 20: two g0 and 14 g1 tasks on each of five nodes
    node_of = {}
    for k in range(5):
        for i in range(2 * k, 2 * k + 2):
            node_of[f"g0#{i}"] = f"n{k}"
        for i in range(14 * k, 14 * k + 14):
            node_of[f"g1#{i}"] = f"n{k}"
    assert imc_gain(b.topology, node_of) == pytest.approx(20.0)
    assert report.collocated_links(b.topology, node_of) == pytest.approx(140.0)


def test_table_renders_fixed_width():
    table = report.Table(["algorithm", "ours", "paper", "ratio"], caption="cap")
    table.add("td", report.pct(0.9471), report.pct(0.931), report.ratio(3.0, 2.0))
    table.add("a-long-name", None, "93.1%", report.ratio(1.0, 0.0))
    lines = table.render().splitlines()
    assert lines[0] == "cap"
    assert len({len(line) for line in lines[1:3]}) == 1
    assert "94.7%" in lines[3] and "1.50×" in lines[3]
    assert lines[4].split()[1] == report.MISSING


def test_cli_lists_and_rejects_unknown(capsys):
    assert cli.main(["--list"]) == 0
    out = capsys.readouterr().out
    for name in ("paper000_optimality", "paper000_throughput", "paper000_micro"):
        assert name in out
    assert cli.main(["no-such-benchmark"]) == 2
    known = benchmarks()
    assert [b.name for b in cli.resolve("optimality,micro", known)] == [
        "paper000_optimality",
        "paper000_micro",
    ]
    assert cli.resolve("paper000_throughput", known)[0].name == "paper000_throughput"
    assert len(cli.resolve("all", known)) == len(known)


@pytest.mark.parametrize("name", ["paper000_optimality", "paper000_throughput", "paper000_micro"])
def test_quick_run_writes_png_and_json(name, tmp_path, capsys):
    info = benchmarks()[name]
    assert isinstance(info.paper, str) and "paper 000 §7" in info.paper
    extra = ["--set", "graphs=12"] if name == "paper000_optimality" else []
    if name == "paper000_throughput":
        extra = ["--set", "durations=0.05,0.1", "--set", "sizes=100,500"]
    code = cli.main([name, "--quick", "--seed", "7", "--output-dir", str(tmp_path), *extra])
    assert code == 0
    out = capsys.readouterr().out
    png, data = tmp_path / f"{name}.png", tmp_path / f"{name}.json"
    assert png.stat().st_size > 1000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = json.loads(data.read_text())
    assert result["benchmark"] == name and result["seed"] == 7 and result["quick"] is True
    assert f"[{info.paper}]" in out.splitlines()[1]  # the title names the paper section
    assert "seed: 7" in out and str(png) in out and "machine:" in out


def test_optimality_quick_counts_every_graph(tmp_path, capsys):
    cli.main(["optimality", "--quick", "--set", "graphs=10", "--output-dir", str(tmp_path)])
    capsys.readouterr()
    result = json.loads((tmp_path / "paper000_optimality.json").read_text())
    assert result["graphs"] == 10
    assert len(result["per_graph"]["optimum"]) == 10
    even = result["algorithms"]["even"]
    assert len(result["per_graph"]["even"]) == 10
    if result["optimum"]["sum"]:
        assert 0.0 <= even["ratio"] <= 1.0 + 1e-9
        for phi, best in zip(
            result["per_graph"]["even"], result["per_graph"]["optimum"], strict=True
        ):
            assert phi is None or phi <= best + 1e-9
