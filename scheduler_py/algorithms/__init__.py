"""Placement algorithms, one module per paper or baseline, each registering a pure
``plan(problem, **params) -> Placement`` with :mod:`scheduler_py.algorithms.registry`.

Modules are discovered automatically: adding ``algorithms/<name>.py`` that calls
``@register(...)`` is all it takes to make an algorithm selectable everywhere.
"""

from __future__ import annotations

import importlib
import pkgutil

_LOADED = False


def load_all() -> None:
    """Import every module of this package once so that they register themselves."""
    global _LOADED
    if _LOADED:
        return
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_") and module.name != "registry":
            importlib.import_module(f"{__name__}.{module.name}")
    _LOADED = True
