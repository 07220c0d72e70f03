"""Benchmarks (`make bench`, `scheduler-py bench NAME`): each prints a table with the
paper's numbers beside ours and ratios against baselines measured in the same run.

A module ``bench/<name>.py`` listed in :data:`scheduler_py.bench.registry.MODULES` (or one
that decorates a function with :func:`scheduler_py.bench.registry.benchmark`) is selectable
by name.
"""

from __future__ import annotations

import importlib
import pkgutil

_LOADED = False


def load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_") and module.name not in ("registry", "report"):
            importlib.import_module(f"{__name__}.{module.name}")
    _LOADED = True
