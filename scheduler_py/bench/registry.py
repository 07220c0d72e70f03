"""Registry of benchmarks by name.

A benchmark is a module ``scheduler_py/bench/<name>.py`` listed in :data:`MODULES`, with
``run(options: BenchOptions) -> None`` (it prints its own tables, see
:mod:`scheduler_py.bench.report`, and writes any plot under ``options.output_dir``) and a
``PAPER`` string (what it reproduces); the first paragraph of its docstring is the summary
``scheduler-py bench --list`` prints.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_py.config.durations import DurationError, parse_seconds


class SettingError(ValueError):
    """A ``--set KEY=VALUE`` the benchmark cannot use; the message names the key, what is
    expected and what was found (``scheduler-py bench`` prints it and exits 2)."""


def seconds_setting(
    extra: dict[str, str], key: str, default: float, *, allow_zero: bool = False
) -> float:
    """``--set KEY=`` as seconds in the one duration syntax of the CLI
    (scheduler_py/config/durations.py: ``30s``, ``500ms``, ``2m``; a bare number is seconds),
    else ``default``."""
    if key not in extra:
        return float(default)
    try:
        return parse_seconds(extra[key], allow_zero=allow_zero)
    except DurationError as error:
        raise SettingError(f"--set {key}=: {error}") from None


def seconds_list_setting(
    extra: dict[str, str], key: str, default: tuple[float, ...]
) -> tuple[float, ...]:
    """``--set KEY=A,B,...``: each item a duration as in :func:`seconds_setting`, else
    ``default``."""
    items = [item.strip() for item in extra.get(key, "").split(",") if item.strip()]
    if not items:
        return tuple(default)
    return tuple(seconds_setting({key: item}, key, 0.0) for item in items)


@dataclass(frozen=True)
class BenchOptions:
    output_dir: Path = Path("bench-results")
    seed: int = 0
    quick: bool = False
    """A reduced run (fewer instances / shorter intervals) for smoke tests."""
    extra: dict[str, str] = field(default_factory=dict)


BenchFunction = Callable[[BenchOptions], None]


@dataclass(frozen=True)
class BenchmarkInfo:
    name: str
    run: BenchFunction
    summary: str
    paper: str


_BENCHMARKS: dict[str, BenchmarkInfo] = {}

MODULES = (
    "paper000_micro",
    "paper000_optimality",
    "paper000_throughput",
    "paper001_albic",
    "paper002_t3",
    "paper003_rstorm",
    "paper004_pipeline",
    "compare",
    "monitoring_aggregation",
    "aggregate_scale",
    "monitor_overhead",
    "monitor_accuracy",
    "reconfig_pause",
    "scale",
    "roundtrip",
    "dashboard_api",
    "cluster",
    "cluster_calibration",
    "cluster_sessions",
)
"""Every benchmark module (the benchmark's name is the module's)."""


def summary_of(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    first = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(first.split())


def _register_modules() -> None:
    for name in MODULES:
        if name not in _BENCHMARKS:
            module = importlib.import_module(f"scheduler_py.bench.{name}")
            _BENCHMARKS[name] = BenchmarkInfo(
                name, module.run, summary_of(module.__doc__), module.PAPER
            )


def benchmarks() -> dict[str, BenchmarkInfo]:
    _register_modules()
    return dict(sorted(_BENCHMARKS.items()))
