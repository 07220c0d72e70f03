"""The unary-count MILP for the exact optimum of φ (``optimal``, method ``milp``), solved by HiGHS
through :func:`scipy.optimize.milp`; see ``docs/algorithms/baselines.md`` §"optimal"."""

from __future__ import annotations

import math
from itertools import pairwise

from scheduler_py.algorithms.baselines.optimal_dp import NEG, Solution
from scheduler_py.algorithms.topdown.counts import (
    CountModel,
    fits_on,
    max_per_node,
    room_for,
)
from scheduler_py.model.types import EPSILON

_Z_PAIR_LIMIT = 36
"""Use the z[c,d,n,k,l] linearisation while (max per node of c)·(of d) ≤ this;
larger pairs use the compact y[c,d,n,k] form (fewer variables, same optimum)."""


def solve_milp(model: CountModel, *, time_limit: float, ignore_traffic: bool = False) -> Solution:
    """The unary-count MILP of ``docs/algorithms/000-topdown.md`` §5.1 solved by HiGHS with a time
    limit."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    classes = model.classes
    nodes = model.nodes
    limit = [[max_per_node(model, cls, node) for node in nodes] for cls in classes]
    columns: list[float] = []  # objective coefficient (minimised)
    upper: list[float] = []
    integral: list[int] = []
    b_index: dict[tuple[int, int], list[int]] = {}

    def new_var(obj: float, ub: float, integer: bool) -> int:
        columns.append(obj)
        upper.append(ub)
        integral.append(1 if integer else 0)
        return len(columns) - 1

    for c in range(len(classes)):
        for n in range(len(nodes)):
            b_index[(c, n)] = [new_var(0.0, 1.0, True) for _ in range(limit[c][n])]

    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lower_b: list[float] = []
    upper_b: list[float] = []

    def add_row(entries: list[tuple[int, float]], lo: float, hi: float) -> None:
        r = len(lower_b)
        for col, val in entries:
            rows.append(r)
            cols.append(col)
            vals.append(val)
        lower_b.append(lo)
        upper_b.append(hi)

    for c, cls in enumerate(classes):
        add_row([(v, 1.0) for n in range(len(nodes)) for v in b_index[(c, n)]], cls.size, cls.size)
        for n in range(len(nodes)):
            bs = b_index[(c, n)]
            for k in range(len(bs) - 1):
                add_row([(bs[k], 1.0), (bs[k + 1], -1.0)], 0.0, math.inf)
    for n, node in enumerate(nodes):
        entries_c = [(v, cls.cpu) for c, cls in enumerate(classes) for v in b_index[(c, n)]]
        add_row([e for e in entries_c if e[1] > 0], -math.inf, node.cpu + EPSILON)
        if not math.isinf(node.memory_mb):
            entries_m = [
                (v, cls.memory_mb) for c, cls in enumerate(classes) for v in b_index[(c, n)]
            ]
            add_row([e for e in entries_m if e[1] > 0], -math.inf, node.memory_mb + EPSILON)
    # symmetry breaking among identical nodes (same CPU and memory, wherever they are in the
    # node list): the first class's count is non-increasing along each such group (any
    # solution can be so sorted; measured faster than ordering by the total count)
    groups: dict[tuple[float, float], list[int]] = {}
    for n, node in enumerate(nodes):
        groups.setdefault((node.cpu, node.memory_mb), []).append(n)
    for members in groups.values():
        for n, m in pairwise(members):
            if classes:
                entries = [(v, 1.0) for v in b_index[(0, n)]]
                entries += [(v, -1.0) for v in b_index[(0, m)]]
                add_row(entries, 0.0, math.inf)

    if not ignore_traffic:
        for c, row in enumerate(model.neighbours):
            for d, w in row:
                if d <= c:
                    continue
                for n in range(len(nodes)):
                    bc, bd = b_index[(c, n)], b_index[(d, n)]
                    if not bc or not bd:
                        continue
                    cc, cd = classes[c], classes[d]
                    if len(bc) * len(bd) <= _Z_PAIR_LIMIT:
                        for k, vc in enumerate(bc, start=1):
                            for m, vd in enumerate(bd, start=1):
                                if not fits_on(
                                    k * cc.cpu + m * cd.cpu,
                                    k * cc.memory_mb + m * cd.memory_mb,
                                    nodes[n],
                                ):
                                    continue  # both cannot be 1 together
                                z = new_var(-w, 1.0, False)
                                add_row([(z, 1.0), (vc, -1.0)], -math.inf, 0.0)
                                add_row([(z, 1.0), (vd, -1.0)], -math.inf, 0.0)
                    else:
                        if len(bc) > len(bd):  # expand the smaller side in unary
                            bc, bd, cc, cd = bd, bc, cd, cc
                        for k, vc in enumerate(bc, start=1):
                            # y = b[c,n,k]·a[d,n]; a[d,n] ≤ what fits beside k of c
                            m = room_for(nodes[n], k * cc.cpu, k * cc.memory_mb, cd, len(bd))
                            if m <= 0:
                                continue
                            y = new_var(-w, m, False)
                            add_row([(y, 1.0)] + [(vd, -1.0) for vd in bd], -math.inf, 0.0)
                            add_row([(y, 1.0), (vc, -float(m))], -math.inf, 0.0)

    count = len(columns)
    if not count:  # nothing to place, or no executor fits any node
        if classes:
            return Solution(None, NEG, "infeasible", True, {})
        return Solution([[0] * len(classes) for _ in nodes], model.constant, "optimal", True, {})
    if not lower_b:
        add_row([], 0.0, 0.0)
    matrix = coo_array((vals, (rows, cols)), shape=(len(lower_b), count)).tocsr()
    result = milp(
        c=np.array(columns),
        constraints=[LinearConstraint(matrix, np.array(lower_b), np.array(upper_b))],
        integrality=np.array(integral),
        bounds=Bounds(np.zeros(count), np.array(upper)),
        options={"time_limit": float(time_limit), "disp": False, "mip_rel_gap": 1e-9},
    )
    detail = {
        "milp_variables": count,
        "milp_constraints": len(lower_b),
        "milp_nodes": int(getattr(result, "mip_node_count", 0) or 0),
        "milp_message": str(result.message),
    }
    dual = getattr(result, "mip_dual_bound", None)
    bound = -float(dual) + model.constant if dual is not None and np.isfinite(dual) else math.inf
    if result.status == 2:
        return Solution(None, NEG, "infeasible", True, detail)
    if result.x is None:
        status = "time_limit" if result.status == 1 else f"highs_status_{result.status}"
        return Solution(None, bound, status, False, detail)
    x = result.x
    counts = [
        [round(float(sum(x[v] for v in b_index[(c, n)]))) for c in range(len(classes))]
        for n in range(len(nodes))
    ]
    detail["milp_objective"] = -float(result.fun) + model.constant
    proven = result.status == 0
    return Solution(counts, bound, "optimal" if proven else "time_limit", proven, detail)
