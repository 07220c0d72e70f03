"""The one METIS wrapper: balanced min-cut k-way partitioning of a weighted graph (pymetis).

Three algorithms cut a traffic graph with METIS: the ``metis`` baseline (executors onto
nodes, ``docs/algorithms/baselines.md`` §"metis"), T3's second level (a node's tasks into
workers, paper 002 §4.5) and ALBIC's split of large collocation sets (paper 001 §4.3,
``docs/algorithms/001-albic.md``). They differ only in how they weigh vertices and edges and
what they do when METIS has nothing to cut; the graph building, the integer scaling METIS
needs and the pymetis call live here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pymetis

Adjacency = list[list[tuple[int, int]]]
"""Per vertex, ``(neighbour, integer edge weight)`` sorted by neighbour (both directions)."""


def integer_weights(values: Iterable[float], scale: int) -> list[int]:
    """``values`` scaled so the largest becomes ``scale`` (each at least 1; all 1 if none > 0)."""
    values = list(values)
    top = max(values, default=0.0)
    if top <= 0:
        return [1] * len(values)
    return [max(1, round(v / top * scale)) for v in values]


def symmetric_adjacency(
    vertices: int, weights: Mapping[tuple[int, int], float], scale: int
) -> Adjacency:
    """The undirected graph of ``weights`` (pair → weight; a pair and its reverse add up),
    edge weights scaled to integers by :func:`integer_weights`. Self-loops and pairs with
    weight ≤ 0 are dropped."""
    merged: dict[tuple[int, int], float] = {}
    for (a, b), w in weights.items():
        if a != b and w > 0:
            key = (a, b) if a < b else (b, a)
            merged[key] = merged.get(key, 0.0) + w
    pairs = sorted(merged)
    scaled = integer_weights((merged[p] for p in pairs), scale)
    adjacency: Adjacency = [[] for _ in range(vertices)]
    for (a, b), w in zip(pairs, scaled, strict=True):
        adjacency[a].append((b, w))
        adjacency[b].append((a, w))
    for row in adjacency:
        row.sort()
    return adjacency


def has_edges(adjacency: Adjacency) -> bool:
    return any(adjacency)


def part_graph(
    adjacency: Adjacency,
    k: int,
    *,
    vertex_weights: Sequence[int] | None = None,
    target_shares: Sequence[float] | None = None,
    recursive: bool = False,
    seed: int | None = None,
    ufactor: int | None = None,
) -> list[int]:
    """The part (``0..k-1``) of every vertex: METIS k-way (or recursive bisection) minimising
    the weight of cut edges with part weights balanced (in ``target_shares`` proportions when
    given; they are normalised to sum to one exactly, as METIS requires).

    ``adjacency`` must have at least one edge (METIS rejects an edgeless graph; callers have
    their own balanced fallback for that case). ``seed``/``ufactor`` ``None`` keep METIS's
    defaults.
    """
    if k <= 1:
        return [0] * len(adjacency)
    xadj = [0]
    adjncy: list[int] = []
    eweights: list[int] = []
    for row in adjacency:
        for neighbour, weight in row:
            adjncy.append(neighbour)
            eweights.append(weight)
        xadj.append(len(adjncy))
    options = {}
    if seed is not None:
        options["seed"] = seed
    if ufactor is not None:
        options["ufactor"] = ufactor
    tpwgts = None
    if target_shares is not None:
        total = sum(target_shares)
        tpwgts = [share / total for share in target_shares[:-1]]
        tpwgts.append(max(0.0, 1.0 - sum(tpwgts)))
    result = pymetis.part_graph(
        k,
        adjacency=pymetis.CSRAdjacency(xadj, adjncy),
        vweights=list(vertex_weights) if vertex_weights is not None else None,
        eweights=eweights,
        tpwgts=tpwgts,
        recursive=recursive,
        options=pymetis.Options(**options) if options else None,
    )
    return [int(part) for part in result.vertex_part]
