"""Loads the one wire contract, ``scheduler.thrift``, with thriftpy2.

The Java shim compiles the very same file at build time (storm_plugin/pom.xml).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from types import ModuleType

import thriftpy2


@cache
def wire() -> ModuleType:
    path = resources.files("scheduler_py.service").joinpath("scheduler.thrift")
    with resources.as_file(path) as file:
        return thriftpy2.load(str(file), module_name="scheduler_wire_thrift")
