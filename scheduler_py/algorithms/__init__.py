"""Placement algorithms: one subpackage per paper, plus the baselines.

Every algorithm is a pure ``plan(problem, *, budget=UNLIMITED, **params) -> Placement``
registered by name with :mod:`scheduler_py.algorithms.registry`. The modules that register
algorithms are listed explicitly in :data:`ALGORITHM_MODULES`; adding an algorithm means
adding its module there. ``docs/algorithms/`` holds our notes on each paper (the algorithm as
implemented, deviations, errata, test vectors); docstrings cite them and the papers.

=================  ==========================================================================
``topdown/``       paper 000 (Chatzistergiou & Viglas, CIKM 2014): ``td``, ``tl``, ``naive``,
                   ``tdls`` and the group/count code they share
``albic/``         paper 001 (ALBIC, Tomasz Kaczmarek et al.): ``albic``
``t3/``            paper 002 (T3-Scheduler): ``t3``
``rstorm/``        paper 003 (R-Storm, Peng et al., Middleware 2015): ``rstorm``
``pipeline/``      paper 004 (pipelined data-parallel placement): ``pipeline``
``baselines/``     ``even``, ``metis``, ``online`` (Aniello et al., DEBS 2013), ``optimal``
``partition.py``   the one METIS (pymetis) wrapper used by ``metis``, ``t3`` and ``albic``
=================  ==========================================================================
"""

from __future__ import annotations

import importlib

ALGORITHM_MODULES: tuple[str, ...] = (
    "scheduler_py.algorithms.topdown.td",
    "scheduler_py.algorithms.topdown.tl",
    "scheduler_py.algorithms.topdown.naive",
    "scheduler_py.algorithms.topdown.tdls",
    "scheduler_py.algorithms.albic.plan",
    "scheduler_py.algorithms.t3.plan",
    "scheduler_py.algorithms.rstorm.plan",
    "scheduler_py.algorithms.pipeline.plan",
    "scheduler_py.algorithms.baselines.even",
    "scheduler_py.algorithms.baselines.metis",
    "scheduler_py.algorithms.baselines.online",
    "scheduler_py.algorithms.baselines.optimal",
)
"""Every module that registers an algorithm, in the order they are imported."""


def load_all() -> None:
    """Import every module of :data:`ALGORITHM_MODULES` (each registers itself on import)."""
    for module in ALGORITHM_MODULES:
        importlib.import_module(module)
