"""The large-instance generator (``scheduler_py/bench/instances.py``) and ``bench scale``'s
summary and targets (``scheduler_py/bench/scale.py``); nothing here is timed."""

from __future__ import annotations

import itertools
import json
import math

import pytest

from scheduler_py.bench import cli, instances, scale
from scheduler_py.bench.instances import generate, zipf_shares
from scheduler_py.bench.scale import Row, summary, targets
from scheduler_py.model.cost import violations
from scheduler_py.model.types import EPSILON, Problem
from scheduler_py.scheduling.documents import plan_cluster

SMALL = [(shape, 100, 10) for shape in instances.SHAPES]


def _incoming(topology) -> dict[str, int]:
    counts = {c.id: 0 for c in topology.components}
    for edge in topology.edges:
        counts[edge.target] += 1
    return counts


@pytest.mark.parametrize(("shape", "executors", "hosts"), [*SMALL, ("layered", 1000, 50)])
def test_sizes_hosts_and_racks(shape, executors, hosts):
    instance = generate(shape, executors, hosts, seed=3)
    assert instance.executors == executors
    assert instance.hosts == hosts
    assert instance.name == f"{shape}-{executors}x{hosts}"
    cpus = {cpu for cpu, _ in instances.HOST_CPUS}
    assert {n.cpu for n in instance.nodes} <= cpus
    for index, node in enumerate(instance.nodes):
        same_rack = instance.nodes[(index // instances.HOSTS_PER_RACK) * instances.HOSTS_PER_RACK]
        assert node.rack == same_rack.rack
    assert len({n.rack for n in instance.nodes}) == math.ceil(hosts / instances.HOSTS_PER_RACK)
    for topology in instance.topologies:
        spouts = {c.id for c in topology.components if c.is_spout}
        assert spouts, topology.id
        # every bolt is fed, no spout is
        assert all((count == 0) == (cid in spouts) for cid, count in _incoming(topology).items())


def test_shapes_have_their_structure():
    chain = generate("chain", 100, 10).topologies[0]
    ids = [c.id for c in chain.components]
    assert [(e.source, e.target) for e in chain.edges] == list(itertools.pairwise(ids))
    assert not chain.pair_traffic  # shuffle only: Eq. 1's even split

    word = generate("wordcount", 100, 10).topologies[0]
    assert [c.parallelism for c in word.components] == [10, 40, 50]
    assert [e.grouping for e in word.edges] == ["shuffle", "fields"]

    diamond = generate("diamond", 100, 10).topologies[0]
    assert sorted(_incoming(diamond).values()) == [0, 1, 1, 2]

    star = generate("star", 1000, 50).topologies[0]
    incoming = _incoming(star)
    hub = max(incoming, key=incoming.get)
    assert incoming[hub] == 8
    assert sum(1 for e in star.edges if e.source == hub) == 8

    layered = generate("layered", 1000, 50).topologies[0]
    assert max(c.parallelism for c in layered.components) <= instances.COMPONENT_MAX

    shared = generate("shared", 1000, 50)
    assert len(shared.topologies) == 5
    assert len({t.id for t in shared.topologies}) == 5


def test_fields_edges_carry_zipf_skewed_pair_traffic():
    word = generate("wordcount", 1000, 50).topologies[0]
    split, count = word.components[1], word.components[2]
    fields = next(e for e in word.edges if e.grouping == "fields")
    into = {}
    for (source, target), rate in word.pair_traffic.items():
        if source.startswith(split.id + "#"):
            into[target] = into.get(target, 0.0) + rate
    assert sum(into.values()) == pytest.approx(fields.traffic)
    assert len(into) == count.parallelism
    assert max(into.values()) / min(into.values()) == pytest.approx(count.parallelism)
    shuffle = next(e for e in word.edges if e.grouping == "shuffle")
    rates = {r for (s, _), r in word.pair_traffic.items() if s.startswith(word.components[0].id)}
    assert len(rates) == 1
    assert rates.pop() * 100 * 400 == pytest.approx(shuffle.traffic)


def test_zipf_shares():
    import random

    shares = zipf_shares(50, random.Random(1))
    assert sum(shares) == pytest.approx(1.0)
    assert max(shares) / min(shares) == pytest.approx(50.0)
    assert shares != sorted(shares, reverse=True)  # ranks are shuffled


@pytest.mark.parametrize(("shape", "executors", "hosts"), SMALL)
def test_same_seed_same_instance_other_seed_other(shape, executors, hosts):
    first, again = generate(shape, executors, hosts, 5), generate(shape, executors, hosts, 5)
    assert first.nodes == again.nodes
    for a, b in zip(first.topologies, again.topologies, strict=True):
        assert (a.components, a.edges, dict(a.pair_traffic)) == (
            b.components,
            b.edges,
            dict(b.pair_traffic),
        )
    other = generate(shape, executors, hosts, 6)
    assert (other.nodes, [t.edges for t in other.topologies]) != (
        first.nodes,
        [t.edges for t in first.topologies],
    )


@pytest.mark.parametrize(("shape", "executors", "hosts"), SMALL)
def test_capacities_are_feasible_and_td_places_every_topology(shape, executors, hosts):
    instance = generate(shape, executors, hosts, seed=2)
    cluster = sum(n.cpu for n in instance.nodes)
    demand = sum(t.total_cpu for t in instance.topologies)
    assert demand == pytest.approx(instances.LOAD * cluster)
    smallest = min(n.cpu for n in instance.nodes)
    assert max(e.cpu for t in instance.topologies for e in t.executors) <= smallest + EPSILON
    result = plan_cluster(instance.nodes, instance.topologies, "td")
    assert result.ok, result.failures
    for topology in instance.topologies:
        placed = result.placements[topology.id]
        assert not violations(Problem(instance.nodes, topology), placed)


def test_combined_problem_holds_every_topology():
    shared = generate("shared", 400, 20)
    combined = shared.combined
    assert len(combined.topology.executors) == shared.executors
    total = sum(rate for t in shared.topologies for _, _, rate in t.pair_traffics())
    assert sum(rate for _, _, rate in combined.topology.pair_traffics()) == pytest.approx(total)
    single = generate("chain", 100, 10)
    assert single.combined.topology is single.topologies[0]


def test_bad_arguments_say_what_was_expected():
    with pytest.raises(ValueError, match="expected one of"):
        generate("ring", 100, 10)
    with pytest.raises(ValueError, match="layered"):
        generate("wordcount", 10_000, 500)
    with pytest.raises(ValueError, match="at least"):
        generate("chain", 2, 1)
    with pytest.raises(ValueError, match="shape-EXECUTORSxHOSTS"):
        scale.parse_instance("chain100", 0)


def _row(instance, algorithm, kept, bound=100.0, seconds=0.5, executors=1000):
    return Row(instance, executors, 50, algorithm, kept, bound, seconds, 10)


def test_summary_has_exactly_the_issue_fields():
    rows = [_row("a", "td", 50.0), _row("a", "even", None)]
    rows[1].error = "failed"
    result = summary(rows)
    assert [tuple(r) for r in result] == [scale.SUMMARY_FIELDS] * 2
    assert result[0]["kept_pct_of_bound"] == pytest.approx(50.0)
    assert result[1]["kept_pct_of_bound"] is None
    assert _row("z", "td", 0.0, bound=0.0).kept_pct_of_bound == 100.0


def test_targets_pass_and_miss():
    good = [_row("a", "td", 90.0), _row("a", "tdls", 96.0), _row("a", "auto", 96.0)]
    assert [t.passed for t in targets(good)] == [True, True, True]

    slow = [_row("a", "td", 90.0), _row("a", "auto", 96.0, seconds=1.5)]
    assert targets(slow)[0].passed is False

    low = [_row("a", "td", 90.0), _row("a", "tdls", 80.0), _row("a", "auto", 94.0)]
    verdicts = targets(low)
    assert [t.passed for t in verdicts] == [False, False, True]
    assert "80" in verdicts[1].detail

    failed = [_row("a", "td", 90.0), _row("a", "auto", None)]
    assert targets(failed)[2].passed is False

    other_size = [_row("b", "td", 1.0, executors=100), _row("b", "auto", 1.0, executors=100)]
    assert targets(other_size)[0].passed is None
    assert targets([])[1].passed is None


def test_skips_and_auto_choice():
    small = generate("layered", 1000, 50)
    assert scale.skip_reason("online", small)
    assert not scale.skip_reason("t3", small)
    assert scale.algorithm_choice("auto", small, 1.0) == ("auto", {"seconds": 1.0})
    shared = generate("shared", 1000, 50)
    assert scale.algorithm_choice("auto", shared, 1.0)[1]["seconds"] == pytest.approx(0.2)
    assert scale.algorithm_choice("td", shared, 1.0) == ("td", {})


def test_run_writes_summary_and_png(tmp_path, capsys):
    code = cli.main(
        [
            "scale",
            "--output-dir",
            str(tmp_path),
            "--set",
            "instances=chain-100x10",
            "--set",
            "algorithms=td,tdls,even",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "targets:" in out and "tdls never below td" in out
    data = json.loads((tmp_path / "scale.json").read_text())
    assert [r["algorithm"] for r in data["summary"]] == ["td", "tdls", "even"]
    assert all(tuple(r) == scale.SUMMARY_FIELDS for r in data["summary"])
    assert data["instances"]["chain-100x10"]["bound"]["method"]
    assert (tmp_path / "scale.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_top_level_bench_lists_benchmarks_and_options(capsys):
    from scheduler_py import cli as top

    assert top.main(["bench", "--list"]) == 0
    assert "scale" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        top.main(["bench", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for text in ("--quick", "--set KEY=VALUE", "--output-dir", "benchmarks:", "scale"):
        assert text in out
    assert top.main(["bench"]) == 2
