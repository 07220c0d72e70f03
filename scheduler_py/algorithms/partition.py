"""The one wrapper around METIS (pymetis): partition a weighted graph in compressed sparse
row form into ``k`` parts with a small edge cut.

Used by the ``metis`` baseline (``baselines/metis.py``), T3's worker-level split
(``t3/partition.py``, paper 002 §4.2) and ALBIC's collocation step (``albic/baselines.py``,
paper 001 §4.3).
"""

from __future__ import annotations

from collections.abc import Sequence


def part_graph(
    k: int,
    xadj: Sequence[int],
    adjncy: Sequence[int],
    *,
    vweights: Sequence[int] | None = None,
    eweights: Sequence[int] | None = None,
    tpwgts: Sequence[float] | None = None,
    recursive: bool = False,
    seed: int | None = None,
    ufactor: int | None = None,
) -> list[int]:
    """The part (0 … k-1) of every vertex.

    ``xadj``/``adjncy`` are the CSR adjacency (each undirected edge listed from both ends),
    weights are positive integers (METIS takes no fractions), ``tpwgts`` the target share of
    each part (summing to one), ``recursive`` recursive bisection instead of k-way, and
    ``seed``/``ufactor`` METIS's options (``None``: METIS's defaults).

    The trivial cases are answered here, not by METIS, which prints "Cannot bisect a graph
    with 0 vertices" or "You are trying to partition a graph into too many parts" on the
    brain's standard output for them: no vertex (no parts), one part (all in part 0), and at
    least as many parts as vertices (every vertex alone, which cuts every edge, as METIS
    must too).
    """
    vertices = len(xadj) - 1
    if vertices <= 0:
        return []
    if k <= 1:
        return [0] * vertices
    if k >= vertices:
        return list(range(vertices))
    import pymetis

    options = pymetis.Options()
    if seed is not None:
        options.seed = seed
    if ufactor is not None:
        options.ufactor = ufactor
    result = pymetis.part_graph(
        k,
        adjacency=pymetis.CSRAdjacency(list(xadj), list(adjncy)),
        vweights=list(vweights) if vweights is not None else None,
        eweights=list(eweights) if eweights is not None else None,
        tpwgts=list(tpwgts) if tpwgts is not None else None,
        recursive=recursive,
        options=options,
    )
    return [int(part) for part in result[1]]
