"""Shared output of the benchmarks: fixed-width tables (ours beside the paper's numbers,
ratio columns), a progress bar on stderr, PNG plots (matplotlib, Agg backend) and a JSON
results file written next to each PNG.

Benchmarks print to stdout only through :func:`title`, :class:`Table`, :func:`line` and
:func:`footer`, so every benchmark reads the same: title with the paper section, table(s),
targets, machine, seed, where the files went.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from scheduler_py.algorithms.registry import AlgorithmInfo, algorithms
from scheduler_py.bench.registry import BenchOptions
from scheduler_py.model.cost import imc_gain, violations
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.types import Edge, Placement, Problem, Topology

T = TypeVar("T")

MISSING = "–"


# --------------------------------------------------------------------------- text output


def line(text: str = "") -> None:
    print(text, flush=True)


def title(text: str, paper: str) -> None:
    """The benchmark's heading: what it measures and which paper section it reproduces."""
    heading = f"{text}  [{paper}]"
    line()
    line(heading)
    line("=" * len(heading))


def fmt(value: Any, spec: str = "") -> str:
    """Format a cell: ``None`` is a dash, floats use ``spec`` (default: 4 significant)."""
    if value is None:
        return MISSING
    if isinstance(value, float):
        if math.isnan(value):
            return MISSING
        if math.isinf(value):
            return "inf"
        return format(value, spec or ".4g")
    return format(value, spec) if spec else str(value)


def pct(value: float | None, digits: int = 1) -> str:
    return MISSING if value is None else f"{100 * value:.{digits}f}%"


def ratio(numerator: float | None, denominator: float | None, digits: int = 2) -> str:
    """``a / b`` as ``1.23×``; a dash when either is missing or ``b`` is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return MISSING
    return f"{numerator / denominator:.{digits}f}×"


class Table:
    """A fixed-width text table; numbers right-aligned, the first column left-aligned.

    Cells are strings (format them with :func:`fmt`, :func:`pct`, :func:`ratio`); ``None``
    prints as a dash. ``notes`` are printed under the table.
    """

    def __init__(
        self, headers: Sequence[str], caption: str = "", notes: Sequence[str] = ()
    ) -> None:
        self.headers = list(headers)
        self.rows = []
        self.caption = caption
        self.notes = list(notes)

    def add(self, *cells: Any) -> None:
        if len(cells) != len(self.headers):
            raise ValueError(f"row has {len(cells)} cells, table has {len(self.headers)}")
        self.rows.append([MISSING if c is None else str(c) for c in cells])

    def render(self) -> str:
        widths = [
            max(len(str(h)), *(len(r[i]) for r in self.rows)) if self.rows else len(str(h))
            for i, h in enumerate(self.headers)
        ]

        def row(cells: Sequence[str]) -> str:
            parts = [
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            ]
            return "  ".join(parts).rstrip()

        out = []
        if self.caption:
            out.append(self.caption)
        out.append(row([str(h) for h in self.headers]))
        out.append("  ".join("-" * w for w in widths))
        out.extend(row(r) for r in self.rows)
        out.extend(f"  {note}" for note in self.notes)
        return "\n".join(out)

    def print(self) -> None:
        line()
        line(self.render())


def verdict(passed: bool | None) -> str:
    return "n/a " if passed is None else ("PASS" if passed else "MISS")


def target_line(label: str, passed: bool | None, detail: str) -> None:
    """One target, e.g. ``[PASS] td >= 94 % of optimum: 94.7 %``."""
    line(f"  [{verdict(passed)}] {label}: {detail}")


# --------------------------------------------------------------------------- progress


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """A tqdm progress bar on stderr; silent when stderr is not a terminal (tests, CI)."""
    from tqdm import tqdm

    yield from tqdm(
        iterable,
        total=total,
        desc=desc,
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
        disable=None,
    )


# --------------------------------------------------------------------------- machine


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu_model = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for text in info:
                if text.startswith("model name"):
                    cpu_model = text.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    return {
        "cpu_model": cpu_model,
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "load_average": load,
    }


class OneCore:
    """Pin this process to one CPU while timing (restored afterwards; no-op where the OS
    has no affinity API). ``core`` is the CPU actually used, or ``None``."""

    def __init__(self) -> None:
        self.saved: set[int] | None = None
        self.core: int | None = None

    def __enter__(self) -> OneCore:
        if hasattr(os, "sched_setaffinity"):
            self.saved = os.sched_getaffinity(0)
            self.core = min(self.saved)
            try:
                os.sched_setaffinity(0, {self.core})
            except OSError:
                self.core = None
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.saved is not None:
            os.sched_setaffinity(0, self.saved)


# --------------------------------------------------------------------------- algorithms


@dataclass(frozen=True)
class Variant:
    """One row of a comparison: a registered algorithm with fixed parameters."""

    label: str
    algorithm: str
    params: Mapping[str, Any]


def available(names: Iterable[str], *, note: str = "") -> list[str]:
    """The subset of ``names`` that is registered now; prints a note for each missing one."""
    known = algorithms()
    present = [n for n in names if n in known]
    for name in names:
        if name not in known:
            line(f"  note: algorithm {name!r} is not registered; skipped{note}")
    return present


def info(name: str) -> AlgorithmInfo:
    return algorithms()[name]


def param_choice(name: str, param: str, candidates: Sequence[str]) -> str | None:
    """The first of ``candidates`` that algorithm ``name`` accepts for ``param``.

    Used for the paper's TL (prioritised by IMC), whose key value is decided by the module
    author: the parameter's description is searched for the candidate words.
    """
    algo = algorithms().get(name)
    if algo is None or param not in algo.params:
        return None
    default, description = algo.params[param]
    text = f"{default} {description}"
    for candidate in candidates:
        if candidate == default or f"'{candidate}'" in text or f"`{candidate}`" in text:
            return candidate
    for candidate in candidates:
        if candidate in text.replace(",", " ").replace("|", " ").split():
            return candidate
    return None


@dataclass
class Outcome:
    """One call of an algorithm: the placement or why it failed, φ and the planning time
    (``seconds`` wall clock; ``cpu_seconds`` this process's CPU time, which contention
    from other processes does not inflate)."""

    placement: Placement | None
    phi: float
    seconds: float
    error: str | None = None
    cpu_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def attempt(name: str, problem: Problem, params: Mapping[str, Any] | None = None) -> Outcome:
    """Plan with ``info.plan`` (timed alone), then verify with the cost module.

    A :class:`SchedulingError` (e.g. allocation failure) or any other exception, or a
    placement that breaks the problem, is a failure with φ = 0 and the reason kept.
    """
    plan = info(name).plan
    error: str | None = None
    placement: Placement | None = None
    cpu_started = time.process_time()
    started = time.perf_counter()
    try:
        placement = plan(problem, **(params or {}))
    except SchedulingError as failure:
        error = f"failed: {failure}"
    except Exception as failure:  # a bug in the algorithm: keep benchmarking the others
        error = f"error: {type(failure).__name__}: {failure}"
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    if placement is None:
        return Outcome(None, 0.0, seconds, error, cpu_seconds)
    problems = violations(problem, placement)
    if problems:
        return Outcome(placement, 0.0, seconds, "invalid: " + "; ".join(problems), cpu_seconds)
    phi = imc_gain(problem.topology, placement.node_of)
    return Outcome(placement, phi, seconds, None, cpu_seconds)


def collocated_links(topology: Topology, node_of: Mapping[str, str]) -> float:
    """Collocated task links Σ_n Σ_e a_{i,n}·a_{j,n} (the metric of the paper's Examples):
    φ of the same topology with every task pair of every edge carrying traffic 1."""
    sizes = {c.id: c.parallelism for c in topology.components}
    unit = replace(
        topology,
        edges=tuple(
            Edge(e.source, e.target, float(sizes[e.source] * sizes[e.target]))
            for e in topology.merged_edges
        ),
    )
    return imc_gain(unit, node_of)


# --------------------------------------------------------------------------- files


def output_paths(options: BenchOptions, name: str) -> tuple[Path, Path]:
    """``<output_dir>/<name>.png`` and ``<output_dir>/<name>.json`` (directory created)."""
    options.output_dir.mkdir(parents=True, exist_ok=True)
    return options.output_dir / f"{name}.png", options.output_dir / f"{name}.json"


def write_json(path: Path, data: Mapping[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_jsonable(data), indent=2, sort_keys=False) + "\n")
    return path


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def plot(path: Path, draw: Callable[[Any], None], *, panels: int = 1, width: float = 6.0) -> Path:
    """Draw ``panels`` side-by-side axes with ``draw(axes)`` and save a PNG (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, panels, figsize=(width * panels, 4.2), squeeze=False)
    try:
        draw(list(axes[0]) if panels > 1 else axes[0][0])
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=110)
    finally:
        plt.close(figure)
    return path


def footer(options: BenchOptions, png: Path | None, json_path: Path | None) -> dict[str, Any]:
    """Machine, seed and where the files went; returns the machine description."""
    info_ = machine()
    line()
    line(
        f"machine: {info_['cpu_model'] or 'unknown CPU'}, {info_['cpu_count']} CPU(s) "
        f"({info_['usable_cpus']} usable), {info_['implementation']} {info_['python']}, "
        f"{info_['platform']}"
    )
    if info_["load_average"] is not None:
        busy = info_["load_average"][0] > (info_["usable_cpus"] or 1)
        line(
            f"load average: {info_['load_average'][0]:.2f} (1 min)"
            + ("  - the machine was busy: times are inflated" if busy else "")
        )
    line(f"seed: {options.seed}{'   (quick run: reduced sizes)' if options.quick else ''}")
    if png is not None:
        line(f"plot: {png}")
    if json_path is not None:
        line(f"data: {json_path}")
    return info_


def publish(
    options: BenchOptions,
    name: str,
    paper: str,
    draw: Callable[[Any], None],
    fields: Mapping[str, Any],
    *,
    panels: int = 1,
    width: float = 6.0,
) -> tuple[Path, Path]:
    """How every benchmark ends: ``<name>.png`` drawn by ``draw`` (see :func:`plot`),
    ``<name>.json`` with :func:`common_json` and ``fields``, then the :func:`footer`.
    Returns the two paths."""
    png, json_path = output_paths(options, name)
    plot(png, draw, panels=panels, width=width)
    write_json(json_path, common_json(options, name, paper) | dict(fields))
    footer(options, png, json_path)
    return png, json_path


def common_json(options: BenchOptions, name: str, paper: str) -> dict[str, Any]:
    return {
        "benchmark": name,
        "paper": paper,
        "seed": options.seed,
        "quick": options.quick,
        "machine": machine(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
