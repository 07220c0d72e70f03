"""Registry of benchmarks by name.

A benchmark is ``run(options: BenchOptions) -> None``: it prints its own tables (see
:mod:`scheduler_py.bench.report`) and writes any plot under ``options.output_dir``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


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


def benchmark(name: str, *, summary: str, paper: str) -> Callable[[BenchFunction], BenchFunction]:
    def decorate(run: BenchFunction) -> BenchFunction:
        if name in _BENCHMARKS and _BENCHMARKS[name].run is not run:
            raise ValueError(f"benchmark {name!r} registered twice")
        _BENCHMARKS[name] = BenchmarkInfo(name, run, summary, paper)
        return run

    return decorate


def benchmarks() -> dict[str, BenchmarkInfo]:
    from scheduler_py import bench

    bench.load_all()
    return dict(sorted(_BENCHMARKS.items()))
