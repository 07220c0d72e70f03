"""taskLevel (``tl``): parameters, pickNode/mergeNodes behaviour and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.topdown import tl as tasklevel
from scheduler_py.model.cost import imc_gain
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
from tests.test_paper000_vectors import FIG2, TC6, counts, links
from tests.test_topdown import (
    FAST,
    check_complete,
    feasible_problems,
    oversized_problems,
    pipeline,
)

TL_VARIANTS = [
    {},
    {"key": "imc_task"},
    {"key": "imc_group"},
    {"pair_order": "random", "seed": 3},
]


def test_registered_parameters_and_defaults():
    info = registry.get("tl")
    assert {k: d for k, (d, _) in info.params.items()} == {
        "key": "rs",
        "pair_order": "lex",
        "seed": 0,
    }


@pytest.mark.parametrize("params", [{"key": "size"}, {"pair_order": "zigzag"}])
def test_bad_parameters_are_rejected(params):
    with pytest.raises(SchedulingError):
        registry.run("tl", FIG2, params)


def test_unknown_executor_in_explicit_sequence_is_rejected():
    with pytest.raises(SchedulingError):
        tasklevel.allocate(FIG2, pair_sequence=[("v1#0", "v9#0")])


def test_random_order_is_deterministic_per_seed():
    a = registry.run("tl", FIG2, {"pair_order": "random", "seed": 7}).node_of
    b = registry.run("tl", FIG2, {"pair_order": "random", "seed": 7}).node_of
    assert a == b
    outcomes = {
        links(registry.run("tl", FIG2, {"pair_order": "random", "seed": s}).node_of, "v1", "v2")
        for s in range(12)
    }
    assert len(outcomes) > 1  # the intra-pair order matters (notes §2.9)


def test_lex_is_deterministic():
    assert registry.run("tl", FIG2).node_of == registry.run("tl", FIG2).node_of


def test_pick_node_stays_on_the_last_node_within_a_group_pair():
    # one edge, lex order: a0 with b0..b3 fill n0; then a1 pairs fall to n0 (full) -> R
    topology = Topology("p", (Component("a", 2, 20), Component("b", 4, 80)), (Edge("a", "b", 8),))
    problem = Problem((Node("n0", 90), Node("n1", 90)), topology)
    placement = registry.run("tl", problem)
    assert counts(placement.node_of) == {"n0": {"a": 1, "b": 4}, "n1": {"a": 1}}


def test_merge_nodes_when_a_pair_spans_two_nodes():
    placement = registry.run("tl", TC6)
    assert counts(placement.node_of) == {"n0": {"v1": 1, "v2": 1, "v3": 1, "v4": 1}}
    assert placement.report["merges"] == 1
    assert imc_gain(TC6.topology, placement.node_of) == pytest.approx(191.0)


def test_relative_significance_vs_imc_prioritisation():
    # notes §4.1(a): PCs 40/40/160 on 4 × 80; IMC key prefers the heavy second pair
    comps = (Component("g0", 4, 40), Component("g1", 4, 40), Component("g2", 16, 160))
    topology = Topology("prio", comps, (Edge("g0", "g1", 100), Edge("g1", "g2", 150)))
    problem = Problem(tuple(Node(f"n{i}", 80) for i in range(4)), topology)
    rs = imc_gain(topology, registry.run("tl", problem, {"key": "rs"}).node_of)
    imc = imc_gain(topology, registry.run("tl", problem, {"key": "imc_group"}).node_of)
    assert rs > imc


def test_pipeline_throughput_shape():
    problem = pipeline(groups=3, tasks=30, nodes=4)
    check_complete(problem, registry.run("tl", problem))


def test_failure_names_the_executor_that_did_not_fit():
    comps = (
        Component("a", 1, 50.0),
        Component("b", 1, 40.0),
        Component("c", 2, 60.0),
        Component("d", 2, 50.0),
    )
    problem = Problem((Node("n0", 100.0), Node("n1", 100.0)), Topology("bp", comps))
    with pytest.raises(InfeasibleError) as error:
        registry.run("tl", problem)
    assert error.value.component == "d" and error.value.resource == "cpu"
    assert "rebalance" in str(error.value)


@FAST
@given(feasible_problems(measured=True), st.sampled_from(TL_VARIANTS))
def test_random_feasible_problems_are_placed_completely_within_capacity(problem, params):
    check_complete(problem, registry.run("tl", problem, params))


@FAST
@given(oversized_problems())
def test_oversized_executor_raises_naming_the_resource(case):
    problem, resource, component = case
    with pytest.raises(InfeasibleError) as error:
        registry.run("tl", problem)
    assert error.value.resource == resource and error.value.component == component
