"""Test vectors TC1-TC9 of the paper-000 notes (§2.9), exact expected outcomes.

Figure 2 is reconstructed as in the notes: pipeline v1 → v2 → v3 → v4, every group PC 40 %,
v2 has 20 tasks and the others 10, IMC 100 / 100 / 10, four nodes of 40 %.
"""

from __future__ import annotations

from collections import Counter

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.topdown import td as topdown
from scheduler_py.algorithms.topdown import tl as tasklevel
from scheduler_py.model.cost import imc_gain
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology


def problem(comps, edges, nodes) -> Problem:
    topology = Topology(
        "t",
        tuple(Component(c, p, cpu) for c, p, cpu in comps),
        tuple(Edge(a, b, imc) for a, b, imc in edges),
    )
    return Problem(tuple(Node(n, cap) for n, cap in nodes), topology)


def counts(node_of) -> dict[str, dict[str, int]]:
    """node -> {component: executors there}."""
    result: dict[str, Counter] = {}
    for executor, node in node_of.items():
        result.setdefault(node, Counter())[executor.split("#")[0]] += 1
    return {node: dict(c) for node, c in result.items()}


def links(node_of, a: str, b: str) -> int:
    """Collocated task links between groups a and b (the metric of Examples 1-2)."""
    per_node = counts(node_of)
    return sum(c.get(a, 0) * c.get(b, 0) for c in per_node.values())


def phi(p: Problem, placement) -> float:
    return imc_gain(p.topology, placement.node_of)


FIG2 = problem(
    [("v1", 10, 40), ("v2", 20, 40), ("v3", 10, 40), ("v4", 10, 40)],
    [("v1", "v2", 100), ("v2", "v3", 100), ("v3", "v4", 10)],
    [(n, 40) for n in "ABCD"],
)
TC4 = problem([("a", 2, 20), ("b", 4, 20)], [("a", "b", 10)], [("n0", 100)])
TC5 = problem([("a", 1, 30), ("b", 8, 240)], [("a", "b", 80)], [(f"n{i}", 100) for i in range(8)])
TC6 = problem(
    [("v1", 1, 10), ("v2", 1, 10), ("v3", 1, 10), ("v4", 1, 10)],
    [("v1", "v2", 100), ("v3", "v4", 90), ("v2", "v3", 1)],
    [("n0", 100), ("n1", 100)],
)
TC7 = problem(
    [("a", 4, 80), ("b", 4, 80), ("c", 6, 60)],
    [("a", "b", 100), ("b", "c", 50)],
    [(f"n{i}", 100) for i in range(3)],
)
TC8 = problem([("a", 3, 60), ("b", 7, 140)], [("a", "b", 21)], [(f"n{i}", 60) for i in range(4)])
TC9 = problem(
    [("a", 2, 105.2), ("b", 6, 170.9), ("c", 1, 28.9), ("d", 7, 158.2), ("e", 1, 36.8)],
    [
        ("a", "e", 14.1),
        ("b", "c", 8.9),
        ("b", "d", 13.2),
        ("b", "e", 18.6),
        ("c", "d", 19.4),
        ("c", "e", 15.0),
        ("d", "e", 14.7),
    ],
    [(f"n{i}", 100) for i in range(8)],
)


@pytest.mark.parametrize("second_mode", ["next", "literal"])
def test_tc1_topdown_example2(second_mode):
    placement = registry.run("td", FIG2, {"second_mode": second_mode})
    assert counts(placement.node_of) == {
        "A": {"v1": 5, "v2": 10},
        "B": {"v1": 5, "v2": 10},
        "C": {"v3": 5, "v4": 5},
        "D": {"v3": 5, "v4": 5},
    }
    assert links(placement.node_of, "v1", "v2") == 100
    assert links(placement.node_of, "v2", "v3") == 0
    assert links(placement.node_of, "v3", "v4") == 50
    assert phi(FIG2, placement) == pytest.approx(55.0)


def tc2_sequence() -> list[tuple[str, str]]:
    """(a1,b1)…(a6,b6), (a7,b1), the other v1v2 pairs a-major, then v2v3 and v3v4 a-major."""

    def a(i):
        return f"v1#{i - 1}"

    def b(j):
        return f"v2#{j - 1}"

    head = [(a(i), b(i)) for i in range(1, 7)] + [(a(7), b(1))]
    rest = [(a(i), b(j)) for i in range(1, 11) for j in range(1, 21) if (a(i), b(j)) not in head]
    v2v3 = [(f"v2#{i}", f"v3#{j}") for i in range(20) for j in range(10)]
    v3v4 = [(f"v3#{i}", f"v4#{j}") for i in range(10) for j in range(10)]
    return head + rest + v2v3 + v3v4


def test_tc2_tasklevel_specified_order_gives_84_links():
    node_of, _ = tasklevel.allocate(FIG2, pair_sequence=tc2_sequence())
    assert counts(node_of) == {
        "A": {"v1": 7, "v2": 6},
        "B": {"v1": 3, "v2": 14},
        "C": {"v3": 1, "v4": 9},
        "D": {"v3": 9, "v4": 1},
    }
    assert links(node_of, "v1", "v2") == 84  # 16 fewer than TD, as the paper says
    assert imc_gain(FIG2.topology, node_of) == pytest.approx(43.8)


def test_tc2b_tasklevel_lex_gives_36_links():
    placement = registry.run("tl", FIG2, {"pair_order": "lex"})
    per_node = counts(placement.node_of)
    assert per_node["A"] == {"v1": 1, "v2": 18}
    assert per_node["B"] == {"v1": 9, "v2": 2}
    assert links(placement.node_of, "v1", "v2") == 36
    assert phi(FIG2, placement) == pytest.approx(19.8)


def test_tc2c_tasklevel_random_orders_give_the_three_outcomes():
    outcomes = Counter()
    for seed in range(60):
        node_of, _ = tasklevel.allocate(FIG2, pair_order="random", seed=seed)
        outcomes[links(node_of, "v1", "v2")] += 1
    assert set(outcomes) <= {84, 96, 100}
    assert outcomes[96] > outcomes[84] and outcomes[96] > outcomes[100]


def test_tc4_fuse():
    for name in ("td", "tl", "naive"):
        placement = registry.run(name, TC4)
        assert counts(placement.node_of) == {"n0": {"a": 2, "b": 4}}
        assert phi(TC4, placement) == pytest.approx(10.0)


def test_tc5_k0_guards():
    degrade = registry.run("td", TC5, {"k0_guard": "degrade"})
    assert counts(degrade.node_of)["n0"] == {"a": 1, "b": 2}
    assert phi(TC5, degrade) == pytest.approx(20.0)  # the optimum
    minimal = registry.run("td", TC5, {"k0_guard": "minimal"})
    assert phi(TC5, minimal) == pytest.approx(10.0)  # 1 link, by chance
    maxprod = registry.run("td", TC5, {"k0_guard": "maxprod"})
    assert phi(TC5, maxprod) == pytest.approx(20.0)


def test_tc6_node_fusion_moves_the_whole_node():
    placement = registry.run("td", TC6)
    assert counts(placement.node_of) == {"n0": {"v1": 1, "v2": 1, "v3": 1, "v4": 1}}
    assert phi(TC6, placement) == pytest.approx(191.0)
    assert placement.report["merges"] == 1


def test_tc7_second_mode_next_vs_literal():
    extended = registry.run("td", TC7, {"second_mode": "next"})
    assert counts(extended.node_of) == {
        "n0": {"a": 2, "b": 2, "c": 2},
        "n1": {"a": 2, "b": 2, "c": 2},
        "n2": {"c": 2},
    }
    assert phi(TC7, extended) == pytest.approx(200 / 3)  # 66.67, the optimum
    literal = registry.run("td", TC7, {"second_mode": "literal"})
    assert counts(literal.node_of) == {
        "n0": {"a": 2, "b": 2, "c": 2},
        "n1": {"a": 2, "b": 2},
        "n2": {"c": 4},
    }
    assert phi(TC7, literal) == pytest.approx(175 / 3)  # 58.33


def test_tc8_remainder_with_recomputed_ratio():
    degrade = registry.run("td", TC8)
    assert counts(degrade.node_of) == {
        "n0": {"a": 1, "b": 2},
        "n1": {"a": 1, "b": 2},
        "n2": {"a": 1, "b": 2},
        "n3": {"b": 1},
    }
    assert phi(TC8, degrade) == pytest.approx(6.0)
    minimal = registry.run("td", TC8, {"k0_guard": "minimal"})
    assert phi(TC8, minimal) == pytest.approx(5.0)


def test_tc9_td_fails_and_the_chain_falls_back_to_tl():
    with pytest.raises(topdown.AllocationFailure):
        topdown.allocate(TC9)
    placement = registry.run("td", TC9)
    assert phi(TC9, placement) == pytest.approx(21.757, abs=5e-4)
    fallback = placement.report["fallback"]
    assert fallback["used"] == "tl"
    assert "component a" in fallback["failed"][0]
    suggestion = fallback["granularity_suggestion"]
    assert suggestion["gcd_cpu"] == 5.0
    assert suggestion["parallelism"]["a"] == 22
    tl = registry.run("tl", TC9)
    assert tl.node_of == placement.node_of


def test_tc9_without_fallback_is_infeasible():
    with pytest.raises(InfeasibleError) as error:
        registry.run("td", TC9, {"fallback": False})
    assert error.value.resource == "cpu"
    assert error.value.component == "a"
    assert error.value.needed == pytest.approx(52.6)
    assert "rebalance" in str(error.value)
