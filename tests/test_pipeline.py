"""Paper 004 (Tantalaki et al. 2020): the §IV worked examples, the Fig. 7(a) timetable, the
notes' §5.1 structural table, property tests of notes §3.4 and the Storm-facing adapter.

Matrices are the notes' reconstruction (``docs/004_pipeline.md`` §3), which agrees with
everything the paper prints cleanly.
"""

from __future__ import annotations

from math import gcd, lcm

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.pipeline import matrix as pm
from scheduler_py.algorithms.pipeline.plan import layout, plan
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology

RANDOM_EDGES = [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4)]
LINEAR_EDGES = [(0, 1), (1, 2), (2, 3)]


def topology(parallelism, edges, name="t", extra=()):
    components = [
        Component(f"c{i}", p, cpu=10.0 * p, is_spout=i == 0) for i, p in enumerate(parallelism)
    ]
    return Topology(
        name,
        (*components, *extra),
        tuple(Edge(f"c{u}", f"c{v}", 1.0) for u, v in edges),
    )


def nodes(count, cpu=400.0, slots=4):
    return tuple(Node(f"n{i:02d}", cpu=cpu, slots=slots) for i in range(count))


def letters_placement(placement, alphabet):
    """{letter: node index} from a placement of components c0.. with the given letters."""
    out = {}
    for comp, letters in enumerate(alphabet):
        for k, letter in enumerate(letters):
            out[letter] = int(placement.node_of[f"c{comp}#{k}"][1:])
    return out


def grid(rows):
    return np.array(rows, dtype=int)


# ---------------------------------------------------------------------------------------
# §IV.A random topology (Fig. 2): t = 6, N = 9

RANDOM_INTER = grid(
    [
        [0, 6, 3, 2, 8, 5, 1, 7, 4],
        [3, 0, 6, 5, 2, 8, 4, 1, 7],
        [6, 3, 0, 8, 5, 2, 7, 4, 1],
        [1, 7, 4, 0, 6, 3, 2, 8, 5],
        [4, 1, 7, 3, 0, 6, 5, 2, 8],
        [7, 4, 1, 6, 3, 0, 8, 5, 2],
    ]
)
RANDOM_SCHEDULE = grid(
    [
        [0, 1, 3, 2, 4, 5, 6, 7, 8],
        [3, 0, 1, 5, 2, 4, 8, 6, 7],
        [1, 3, 0, 4, 5, 2, 7, 8, 6],
        [6, 7, 8, 0, 1, 3, 2, 4, 5],
        [8, 6, 7, 3, 0, 1, 5, 2, 4],
        [7, 8, 6, 1, 3, 0, 4, 5, 2],
        [2, 4, 5, 6, 7, 8, 0, 1, 3],
        [5, 2, 4, 8, 6, 7, 3, 0, 1],
        [4, 5, 2, 7, 8, 6, 1, 3, 0],
    ]
)
RANDOM_LETTERS = ["UVWXYZ", "ABCDE", "FGHI", "JKLM", "NOPQR"]


def test_random_example_algorithm1_steps():
    shape = pm.Shape(6, 9)
    assert (shape.G, shape.t1, shape.N1, shape.budget) == (3, 2, 3, 1)
    init, trn, moved, inter = pm.algorithm1_steps(shape)
    assert init.tolist() == [
        [0, 0, 0, 0, 0, 0, 1, 1, 1],
        [1, 1, 1, 2, 2, 2, 2, 2, 2],
        [3, 3, 3, 3, 3, 3, 4, 4, 4],
        [4, 4, 4, 5, 5, 5, 5, 5, 5],
        [6, 6, 6, 6, 6, 6, 7, 7, 7],
        [7, 7, 7, 8, 8, 8, 8, 8, 8],
    ]
    assert trn.tolist() == [
        [0, 0, 0, 0, 0, 0, 1, 1, 1],
        [3, 3, 3, 3, 3, 3, 4, 4, 4],
        [6, 6, 6, 6, 6, 6, 7, 7, 7],
        [1, 1, 1, 2, 2, 2, 2, 2, 2],
        [4, 4, 4, 5, 5, 5, 5, 5, 5],
        [7, 7, 7, 8, 8, 8, 8, 8, 8],
    ]
    assert moved.tolist() == [
        [0, 0, 0, 2, 2, 2, 1, 1, 1],
        [3, 3, 3, 5, 5, 5, 4, 4, 4],
        [6, 6, 6, 8, 8, 8, 7, 7, 7],
        [1, 1, 1, 0, 0, 0, 2, 2, 2],
        [4, 4, 4, 3, 3, 3, 5, 5, 5],
        [7, 7, 7, 6, 6, 6, 8, 8, 8],
    ]
    assert (inter == RANDOM_INTER).all()


@pytest.mark.parametrize("mode", ["faithful", "robust"])
def test_random_example_refinement_and_schedule(mode):
    shape = pm.Shape(6, 9)
    groups = pm.first_block_row_groups(RANDOM_INTER, shape)
    assert groups == [[0, 3, 6], [2, 5, 8], [1, 4, 7]]  # the paper's M'
    rminus = pm.non_communicating(groups, set(RANDOM_EDGES))
    assert rminus == {
        0: [6, 3], 1: [7, 4], 2: [8, 5], 3: [6, 0], 4: [7, 1],
        5: [8, 2], 6: [3, 0], 7: [4, 1], 8: [5, 2],
    }  # fmt: skip
    parallelism = [6, 5, 4, 4, 5, 0, 0, 0, 0]
    refined = pm.refine(RANDOM_INTER, shape, set(RANDOM_EDGES), parallelism, mode)
    assert refined.swaps == ((6, 1), (8, 4))
    fin = refined.apply(RANDOM_INTER)
    assert (fin == RANDOM_SCHEDULE[:6]).all()
    assert (pm.complete_schedule(fin, shape) == RANDOM_SCHEDULE).all()
    assert pm.first_block_row_groups(fin, shape) == [[0, 1, 3], [2, 4, 5], [6, 7, 8]]


def test_random_example_placement_timetable_and_stall():
    problem = Problem(nodes(9), topology([6, 5, 4, 4, 5], RANDOM_EDGES))
    placement = registry.run("pipeline", problem)
    where = letters_placement(placement, RANDOM_LETTERS)
    expected = [
        "UAJFN....",
        "KVB.GO...",
        "CLWP.H...",
        "...XDMIQ.",
        "....YE..R",
        ".....Z...",
    ]
    for row in expected:
        for node, letter in enumerate(row):
            if letter != ".":
                assert where[letter] == node, letter
    report = placement.report
    assert list(report["per_node_load"].values()) == [3, 3, 3, 3, 4, 5, 1, 1, 1]
    assert report["chunks"][0]["swaps"] == [["~dummy6", "c1"], ["~dummy8", "c4"]]
    assert report["chunks"][0]["schedule"] == RANDOM_SCHEDULE.tolist()
    assert report["stall_h_per_period"] == 5  # notes §3.1: 5h per 9-slot period
    assert report["transfers_per_period"] == 110
    assert report["steps_with_no_traffic"] == [] and report["empty_stage_steps"] == 0
    assert report["stages"] == 3 and report["period"] == 9

    lay = layout(problem)
    mp = lay.plans[0]
    names = {
        (c, k): RANDOM_LETTERS[c][k]
        for c in range(5)
        for k in range(6)
        if k < len(RANDOM_LETTERS[c])
    }

    def slot(delta):
        found = pm.slot_transfers(mp.schedule, mp.positions, list(lay.edges), list(lay.level),
                                  delta)  # fmt: skip
        return {s: {names[a] + names[b] for a, b in pairs} for s, pairs in found.items()}

    assert slot(0) == {0: {"UC", "VA", "XB", "YD", "ZE"}}
    assert slot(1) == {
        0: {"VC", "WA", "XE", "YB", "ZD"},
        1: {"CK", "AL", "BF", "DG", "EH", "EM"},
    }
    third = slot(2)
    assert third[0] == {"UA", "WC", "XD", "YE", "ZB"}
    assert third[1] == {"CF", "AK", "BL", "DJ", "EG"}  # D->J: "nodes 4 and 2"
    assert {"JP", "GN", "HO", "MO"} <= third[2]  # H and M both feed O on node 5: stall h


# ---------------------------------------------------------------------------------------
# §IV.B linear topology (Fig. 6): t = 4, N = 8

LINEAR_FIN = [
    [0, 1, 3, 2, 6, 7, 5, 4],
    [2, 0, 1, 3, 4, 6, 7, 5],
    [3, 2, 0, 1, 5, 4, 6, 7],
    [1, 3, 2, 0, 7, 5, 4, 6],
]
LINEAR_LETTERS = ["LMN", "ABCD", "EFG", "HIJK"]


@pytest.mark.parametrize("mode", ["faithful", "robust"])
def test_linear_example_matrices(mode):
    shape = pm.Shape(4, 8)
    init, trn, moved, inter = pm.algorithm1_steps(shape)
    assert init.tolist() == [
        [0, 0, 0, 0, 1, 1, 1, 1],
        [2, 2, 2, 2, 3, 3, 3, 3],
        [4, 4, 4, 4, 5, 5, 5, 5],
        [6, 6, 6, 6, 7, 7, 7, 7],
    ]
    assert (trn == init).all() and (moved == init).all()  # t' = 1: Eqs. 6 and 10 are no-ops
    assert inter.tolist() == [
        [0, 6, 4, 2, 1, 7, 5, 3],
        [2, 0, 6, 4, 3, 1, 7, 5],
        [4, 2, 0, 6, 5, 3, 1, 7],
        [6, 4, 2, 0, 7, 5, 3, 1],
    ]
    groups = pm.first_block_row_groups(inter, shape)
    assert groups == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert pm.non_communicating(groups, set(LINEAR_EDGES)) == {
        0: [6, 4, 2], 2: [6, 4, 0], 4: [6, 2, 0], 6: [4, 2, 0],
        1: [7, 5, 3], 3: [7, 5, 1], 5: [7, 3, 1], 7: [5, 3, 1],
    }  # fmt: skip
    refined = pm.refine(inter, shape, set(LINEAR_EDGES), [3, 4, 3, 4, 0, 0, 0, 0], mode)
    assert refined.swaps == ((6, 1), (4, 3))  # "6 with 1, and 4 with 3"
    fin = refined.apply(inter)
    assert fin.tolist() == LINEAR_FIN
    assert pm.complete_schedule(fin, shape)[4:].tolist() == [
        [6, 7, 5, 4, 0, 1, 3, 2],
        [4, 6, 7, 5, 2, 0, 1, 3],
        [5, 4, 6, 7, 3, 2, 0, 1],
        [7, 5, 4, 6, 1, 3, 2, 0],
    ]


def test_linear_example_placement_and_fig7a_table():
    problem = Problem(nodes(8), topology([3, 4, 3, 4], LINEAR_EDGES))
    placement = registry.run("pipeline", problem)
    where = letters_placement(placement, LINEAR_LETTERS)
    for row in ["LAHE....", "FMBI....", "JGNC....", "DK......"]:
        for node, letter in enumerate(row):
            if letter != ".":
                assert where[letter] == node, letter
    report = placement.report
    assert list(report["per_node_load"].values()) == [4, 4, 3, 3, 0, 0, 0, 0]
    assert report["stall_h_per_period"] == 0 and report["stall_count"] == 0
    assert report["steps_with_no_traffic"] == [4, 5, 6, 7]
    assert report["empty_stage_steps"] == 12  # each stage busy in 4 of 8 steps
    assert report["period"] == 8  # the printed S_0..S_8 is a copy error (notes A7)

    lay = layout(problem)
    mp = lay.plans[0]
    names = {(c, k): LINEAR_LETTERS[c][k] for c in range(4) for k in range(len(LINEAR_LETTERS[c]))}

    def slot(delta):
        found = pm.slot_transfers(mp.schedule, mp.positions, list(lay.edges), list(lay.level),
                                  delta)  # fmt: skip
        return {s: {names[a] + names[b] for a, b in pairs} for s, pairs in found.items()}

    fig7a = [
        {0: {"LD", "MA", "NC"}},
        {0: {"LB", "MD", "NA"}, 1: {"DF", "AG", "BE"}},
        {0: {"LC", "MB", "ND"}, 1: {"AF", "BG", "CE"}, 2: {"FJ", "GK", "EH"}},
        {0: {"LA", "MC", "NB"}, 1: {"DE", "BF", "CG"}, 2: {"FH", "GJ", "EI"}},
        {1: {"DG", "AE", "CF"}, 2: {"FI", "GH", "EK"}},
        {2: {"FK", "GI", "EJ"}},
        {},  # steps 6-7 (and stages 1-2 at steps 5-7) carry nothing: empty slots
        {},
    ]
    for delta, expected in enumerate(fig7a):
        assert slot(delta) == expected, delta
    assert slot(8)[0] == {"LD", "MA", "NC"}  # step 0 again after P = 8 slots


# ---------------------------------------------------------------------------------------
# Fig. 1 / Eq. 1: t = 4, N = 6 (derived by the notes)


def test_fig1_example():
    shape = pm.Shape(4, 6)
    init, trn, moved, inter = pm.algorithm1_steps(shape)
    assert init.tolist() == [[0, 0, 0, 0, 1, 1], [1, 1, 2, 2, 2, 2], [3, 3, 3, 3, 4, 4],
                             [4, 4, 5, 5, 5, 5]]  # fmt: skip
    assert trn.tolist() == [[0, 0, 0, 0, 1, 1], [3, 3, 3, 3, 4, 4], [1, 1, 2, 2, 2, 2],
                            [4, 4, 5, 5, 5, 5]]  # fmt: skip
    assert moved.tolist() == [[0, 0, 2, 2, 1, 1], [3, 3, 5, 5, 4, 4], [1, 1, 0, 0, 2, 2],
                              [4, 4, 3, 3, 5, 5]]  # fmt: skip
    assert inter.tolist() == [[0, 3, 2, 5, 1, 4], [3, 0, 5, 2, 4, 1], [1, 4, 0, 3, 2, 5],
                              [4, 1, 3, 0, 5, 2]]  # fmt: skip
    assert pm.first_block_row_groups(inter, shape) == [[0, 3], [2, 5], [1, 4]]
    mp = pm.plan_matrix([4] * 5, RANDOM_EDGES, 6)
    assert mp.refinement.swaps == ((3, 1), (5, 4))
    assert mp.fin.tolist() == [[0, 1, 2, 4, 3, 5], [1, 0, 4, 2, 5, 3], [3, 5, 0, 1, 2, 4],
                               [5, 3, 1, 0, 4, 2]]  # fmt: skip
    assert mp.schedule[4:].tolist() == [[2, 4, 3, 5, 0, 1], [4, 2, 5, 3, 1, 0]]
    placement = registry.run("pipeline", Problem(nodes(6), topology([4] * 5, RANDOM_EDGES)))
    where = letters_placement(placement, ["QRST", "ABCD", "EFGH", "IJKL", "MNOP"])
    for row in ["QAEMI.", "BRNF.J", "K.SCGO", ".LDTPH"]:
        for node, letter in enumerate(row):
            if letter != ".":
                assert where[letter] == node, letter
    assert placement.report["stall_h_per_period"] == 4


# ---------------------------------------------------------------------------------------
# Notes §5.1 E1: the structural table (pipeline columns and RR(Storm) in stage order)

DIAMOND = [(0, 1), (0, 2), (1, 3), (2, 3)]
LINEAR5 = [(0, 1), (1, 2), (2, 3), (3, 4)]
E1_TABLE = [
    # parallelism, edges, N, t used, RR loads, RR f/D, pipeline loads, pipeline f/D, stall
    ([6, 5, 4, 4, 5], RANDOM_EDGES, 9, 6, [3, 3, 3, 3, 3, 3, 2, 2, 2], (0.093, 3.11),
     [3, 3, 3, 3, 4, 5, 1, 1, 1], (0.133, 2.45), 5),
    ([3] * 5, RANDOM_EDGES, 9, 3, [2, 2, 2, 2, 2, 2, 1, 1, 1], (0.000, 3.00),
     [3, 3, 3, 1, 1, 1, 1, 1, 1], (0.133, 2.76), 0),
    ([4] * 5, RANDOM_EDGES, 9, 6, [3, 3, 2, 2, 2, 2, 2, 2, 2], (0.075, 3.35),
     [3, 3, 3, 3, 3, 3, 1, 1, 0], (0.138, 2.17), 4),
    ([5] * 5, RANDOM_EDGES, 9, 6, [3, 3, 3, 3, 3, 3, 3, 2, 2], (0.088, 3.15),
     [3, 3, 3, 4, 4, 4, 1, 2, 1], (0.128, 2.45), 8),
    ([6] * 5, RANDOM_EDGES, 9, 6, [4, 4, 4, 3, 3, 3, 3, 3, 3], (0.083, 3.22),
     [3, 3, 3, 5, 5, 5, 2, 2, 2], (0.133, 2.46), 9),
    ([3, 4, 3, 4], LINEAR_EDGES, 8, 4, [2, 2, 2, 2, 2, 2, 1, 1], (0.000, 3.39),
     [4, 4, 3, 3, 0, 0, 0, 0], (0.250, 1.28), 0),
    ([2] * 4, LINEAR_EDGES, 8, 2, [1] * 8, (0.000, 2.00), [2, 2, 0, 0, 2, 2, 0, 0],
     (0.333, 1.67), 0),
    ([3] * 4, LINEAR_EDGES, 8, 4, [2, 2, 2, 2, 1, 1, 1, 1], (0.000, 3.22),
     [3, 3, 3, 3, 0, 0, 0, 0], (0.222, 1.33), 0),
    ([4] * 4, LINEAR_EDGES, 8, 4, [2] * 8, (0.000, 4.00), [4, 4, 4, 4, 0, 0, 0, 0],
     (0.250, 1.25), 0),
    ([10] * 4, DIAMOND, 8, 10, [5] * 8, (0.120, 2.64), [6, 6, 4, 4, 6, 6, 4, 4],
     (0.130, 2.61), 16),
    ([16, 16, 8, 4, 1], LINEAR5, 8, 16, [6, 6, 6, 6, 6, 5, 5, 5], (0.094, 2.59),
     [6, 5, 5, 5, 6, 6, 6, 6], (0.094, 2.69), 8),
    ([4] * 5, RANDOM_EDGES, 6, 4, [4, 4, 3, 3, 3, 3], (0.125, 2.12), [3, 3, 4, 4, 3, 3],
     (0.175, 1.77), 4),
]  # fmt: skip


@pytest.mark.parametrize("row", E1_TABLE, ids=lambda r: f"{r[0]}-N{r[2]}")
def test_notes_structural_table(row):
    parallelism, edges, N, t_used, rr_loads, rr_fd, loads, fd, stall = row
    problem = Problem(nodes(N), topology(parallelism, edges))
    placement = registry.run("pipeline", problem)
    report = placement.report
    assert report["chunks"][0]["t_used"] == t_used
    assert list(report["per_node_load"].values()) == loads
    assert report["intra_node_share"] == pytest.approx(fd[0], abs=5.1e-4)
    assert report["mean_index_distance"] == pytest.approx(fd[1], abs=5.1e-3)
    assert report["stall_h_per_period"] == stall
    rr = pm.round_robin_positions(parallelism, N)
    assert np.bincount([j for p in rr for j in p], minlength=N).tolist() == rr_loads
    assert pm.shuffle_distance(rr, edges) == pytest.approx(rr_fd[1], abs=5.1e-3)
    rr_node_of = {f"c{v}#{k}": f"n{j:02d}" for v, p in enumerate(rr) for k, j in enumerate(p)}
    from scheduler_py.algorithms.pipeline.plan import intra_node_share

    assert intra_node_share(problem.topology, rr_node_of) == pytest.approx(rr_fd[0], abs=5.1e-4)


# ---------------------------------------------------------------------------------------
# Properties (notes §3.4)

shapes = st.tuples(st.integers(1, 21), st.integers(2, 14))


def _track(tau: int, shape: pm.Shape) -> tuple[int, int]:
    """Where Algorithm 1 moves padded task number tau: (row in M'_inter, column)."""
    G, t1, N1 = shape.G, shape.t1, shape.N1
    i, j = divmod(tau, shape.N)
    i1 = i // t1 + (i % t1) * G
    r, r_in = divmod(i1, G)
    r_new = (r * N1 + j // G) % t1
    return r_new * G + (r_in + j % G) % G, j


@settings(max_examples=150, deadline=None)
@given(shapes)
def test_algorithm1_rows_closed_form_circulant_and_periodicity(tn):
    shape = pm.Shape(*tn)
    inter = pm.algorithm1(shape)
    assert (inter == pm.closed_form(shape)).all()
    for row in inter:  # Proposition 1: every row is a permutation of the nodes
        assert sorted(row.tolist()) == list(range(shape.N))
    init = pm.m_init(shape)
    for j in range(shape.N):  # no element changes column
        assert sorted(inter[:, j].tolist()) == sorted(init[:, j].tolist())
    G, N1 = shape.G, shape.N1
    for i in range(shape.t):
        rho, r_in = divmod(i, G)
        for j in range(shape.N):
            c, c_in = divmod(j, G)
            assert inter[i, j] == inter[r_in, ((c - rho) % N1) * G + c_in]
    period = lcm(shape.t, shape.N)
    for tau in range(shape.t * shape.N - period):
        row, col = _track(tau, shape)
        row2, col2 = _track(tau + period, shape)
        assert inter[row, col] == tau // shape.t
        assert col2 == col and inter[row2, col2] - inter[row, col] == N1
        assert row // G == row2 // G and (row2 - row) % G == 1  # adjacent inner rows


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(2, 8), st.integers(1, 3))
def test_scaling_keeps_the_block_pattern(t, N, m):
    small, big = pm.Shape(t, N), pm.Shape(m * t, m * N)
    a, b = pm.algorithm1(small), pm.algorithm1(big)
    base_a = a[:: small.G, :: small.G] % small.N1
    base_b = b[:: big.G, :: big.G] % big.N1
    assert (base_a == base_b).all()


@st.composite
def dags(draw):
    N = draw(st.integers(2, 12))
    n = draw(st.integers(1, N))
    parallelism = draw(st.lists(st.integers(1, 2 * N), min_size=n, max_size=n))
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs \
        else []  # fmt: skip
    return parallelism, sorted(edges), N


@settings(max_examples=150, deadline=None)
@given(dags(), st.sampled_from(["robust", "faithful"]))
def test_plan_is_latin_and_serves_every_pair_once(case, mode):
    parallelism, edges, N = case
    mp = pm.plan_matrix(parallelism, edges, N, refinement=mode)
    for row in mp.fin:
        assert sorted(row.tolist()) == list(range(N))
    S = mp.schedule
    assert S.shape == (N, N)
    for k in range(N):
        assert sorted(S[k].tolist()) == list(range(N))
        assert sorted(S[:, k].tolist()) == list(range(N))
    if mp.shape.t <= N:
        for v, positions in enumerate(mp.positions):
            assert len(set(positions)) == len(positions) == parallelism[v]
    for u, v in edges:  # over one period of N steps every (u-task, v-task) pair once
        served = []
        for p in range(N):
            for a, j in enumerate(mp.positions[u]):
                served += [(a, b) for b, node in enumerate(mp.positions[v]) if node == S[p][j]]
        assert sorted(served) == [(a, b) for a in range(parallelism[u])
                                  for b in range(parallelism[v])]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(dags())
def test_robust_refinement_never_increases_inter_node_pairs(case):
    parallelism, edges, N = case
    refined = pm.plan_matrix(parallelism, edges, N, refinement="robust")
    plain = pm.plan_matrix(parallelism, edges, N, refinement="off")
    assert refined.shape == plain.shape
    assert pm.inter_node_pairs(refined.positions, edges, N) <= pm.inter_node_pairs(
        plain.positions, edges, N
    )


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 20), st.integers(2, 16))
def test_g1_padding(t, N):
    padded = pm.smallest_padding(t, N)
    assert padded >= t and gcd(padded, N) > 1
    assert all(gcd(x, N) == 1 for x in range(t, padded))


# ---------------------------------------------------------------------------------------
# The Storm-facing adapter


def test_system_executors_and_validity():
    acker = Component("__acker", 2, cpu=5.0, is_system=True)
    problem = Problem(nodes(4), topology([2, 2, 2], LINEAR_EDGES[:2], extra=(acker,)))
    placement = registry.run("pipeline", problem)
    assert {"__acker#0", "__acker#1"} <= set(placement.node_of)
    used = {placement.node_of[f"c{v}#{k}"] for v in range(3) for k in range(2)}
    assert {placement.node_of["__acker#0"], placement.node_of["__acker#1"]} <= used
    spouts = registry.run("pipeline", problem, {"system_executors": "with_spouts"})
    spout_nodes = {spouts.node_of["c0#0"], spouts.node_of["c0#1"]}
    assert spouts.node_of["__acker#0"] in spout_nodes


def test_more_components_than_nodes_stacks():
    edges = [(i, i + 1) for i in range(6)]
    problem = Problem(nodes(3), topology([2] * 7, edges))
    placement = registry.run("pipeline", problem)
    report = placement.report
    assert report["stacked"] and [len(c["components"]) for c in report["chunks"]] == [3, 2, 2]
    assert set(placement.node_of.values()) <= {"n00", "n01", "n02"}
    slots = registry.run("pipeline", problem, {"overflow": "slots"})
    assert not slots.report["stacked"]  # 12 slots >= 7 components
    assert len({slots.worker_key(e) for e in slots.node_of}) > 3


def test_g1_fixes():
    problem = Problem(nodes(9), topology([4] * 5, RANDOM_EDGES))
    padded = registry.run("pipeline", problem).report["chunks"][0]
    assert padded["t"] == 4 and padded["t_used"] == 6 and padded["padded_for_g1"]
    dropped = registry.run("pipeline", problem, {"g1_fix": "drop_node"})
    assert len(dropped.report["node_index"]) == 8  # gcd(4, 8) = 4
    assert dropped.report["chunks"][0]["t_used"] == 4
    none = registry.run("pipeline", problem, {"g1_fix": "none"}).report["chunks"][0]
    assert none["G"] == 1 and none["swaps"] == []


def test_capacity_repair_and_strict():
    small = tuple(Node(f"n{i:02d}", cpu=35.0, slots=2) for i in range(8))
    problem = Problem(small, topology([3, 4, 3, 4], LINEAR_EDGES))  # 10 % per executor
    placement = registry.run("pipeline", problem)
    assert placement.report["capacity_repairs"]  # refinement packs 4 per node
    with pytest.raises(InfeasibleError):
        plan(problem, capacity="strict")


def test_nodes_without_slots_are_skipped_and_bad_params_rejected():
    mixed = (*nodes(3), Node("z-full", cpu=400.0, slots=0))
    placement = registry.run("pipeline", Problem(mixed, topology([3, 3], [(0, 1)])))
    assert "z-full" not in placement.nodes_used
    with pytest.raises(SchedulingError):
        plan(Problem(nodes(3), topology([2, 2], [(0, 1)])), refinement="magic")
