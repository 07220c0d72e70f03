"""Placement algorithms: one subpackage per paper, plus the baselines. Each registers a pure
``plan(problem, *, budget=..., **params) -> Placement`` with :mod:`.registry`.

* ``topdown/`` — paper 000, group-aware top-down allocation: ``td``, ``tl``, ``naive``,
  and our ``tdls`` (``docs/algorithms/000-topdown.md``);
* ``albic/`` — paper 001, ALBIC: ``albic`` (``docs/algorithms/001-albic.md``);
* ``t3/`` — paper 002, T3-Scheduler: ``t3`` (``docs/algorithms/002-t3.md``);
* ``rstorm/`` — paper 003, R-Storm: ``rstorm`` (``docs/algorithms/003-rstorm.md``);
* ``pipeline/`` — paper 004, pipeline scheduling: ``pipeline``
  (``docs/algorithms/004-pipeline.md``);
* ``baselines/`` — Storm's EvenScheduler ``even``, METIS ``metis``, Aniello et al.'s
  ``online``, the exact ``optimal`` (``docs/algorithms/baselines.md``);
* ``locality`` — ``locality``: slices for Storm's locality-aware shuffle (ours);
* ``links`` — ``links``: the busiest network link lowest, for uniform shuffles (ours);
* ``portfolio`` — ``auto``: the others within one budget, the best plan kept (ours);
* ``fastest`` — ``throughput``: the highest predicted throughput under Storm's routing (ours).

An algorithm becomes selectable everywhere by adding its module to :data:`MODULES`.
"""

from __future__ import annotations

import importlib

MODULES = (
    "topdown.td",
    "topdown.tl",
    "topdown.naive",
    "topdown.tdls",
    "albic.plan",
    "t3.plan",
    "rstorm.plan",
    "pipeline.plan",
    "baselines.even",
    "baselines.metis",
    "baselines.online",
    "baselines.optimal",
    "locality",
    "links",
    "portfolio",
    "fastest",
)
"""Every module that registers an algorithm, in listing order."""

_LOADED = False


def load_all() -> None:
    """Import every module of :data:`MODULES` once so that they register themselves."""
    global _LOADED
    if _LOADED:
        return
    for module in MODULES:
        importlib.import_module(f"{__name__}.{module}")
    _LOADED = True
