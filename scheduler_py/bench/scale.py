"""Kept traffic of td, tdls, auto, rstorm, t3, online, metis, even as % of an upper
bound on realistic instances of 100-10,000 executors on 10-500 hosts in racks.

Planning at scale (docs/evaluation.md, "Planning at scale"): every algorithm's kept traffic
as % of an upper bound on realistic instances of 100 – 10,000 executors on 10 – 500
heterogeneous hosts.

Instances come from :mod:`scheduler_py.bench.instances` (chains, diamonds, stars, word
counts, layered DAGs with Zipf-skewed pair traffic, several topologies sharing a cluster).
Each instance is planned by every algorithm in turn (algorithms interleaved per instance)
through :func:`scheduler_py.scheduling.documents.plan_cluster` — the scheduling round's own
path, every plan verified —, the topologies of a shared instance one after another. Kept
traffic is φ (paper 000 §3, Eq. 4) summed over the topologies; the bound is
:func:`scheduler_py.model.bound.traffic_bound` of all topologies together
(:attr:`~scheduler_py.bench.instances.Instance.combined`) with a generous budget, and the
method it used is printed beside it (a knapsack or forced-cut bound is looser than the LP,
so a low % may be the bound's slack as much as the plan's).

``auto`` gets :data:`AUTO_SECS` per instance (split evenly over a shared instance's
topologies). From the sizes of :data:`SKIP_FROM` on, ``online`` and ``t3`` are skipped: they
do not look at a time budget and take minutes there; ``auto`` keeps them as candidates below
:data:`LARGE` executors (it gives each candidate a share of its budget, but cannot stop one
that ignores it) and leaves them out from there on.

Targets: ``auto`` ≥ 95 % of the bound on the 1,000-executor instances within
1 s; ``tdls`` and ``auto`` never below ``td``.

Options (``--set``): ``instances`` (comma-separated ``shape-EXECUTORSxHOSTS``),
``algorithms``, ``auto_secs``, ``bound_secs``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scheduler_py.algorithms.portfolio import CANDIDATES
from scheduler_py.bench import report
from scheduler_py.bench.instances import Instance, generate
from scheduler_py.bench.registry import BenchOptions, seconds_setting
from scheduler_py.bench.report import Table, fmt
from scheduler_py.model.bound import TrafficBound, traffic_bound
from scheduler_py.model.budget import Budget
from scheduler_py.model.cost import imc_gain

NAME = "scale"
PAPER = "planning at scale (kept traffic vs an upper bound)"
ALGORITHMS = ("td", "tdls", "auto", "rstorm", "t3", "online", "metis", "even")
SKIP_FROM = {"online": 1000, "t3": 5000}
"""executors from which an algorithm is skipped: neither looks at its time budget, and here
online took 372 s on ``layered-1000x50`` (load average 20-34 on 2 cores), t3 did not finish a
10,000-executor instance in 400 s"""
LARGE = 5000
INSTANCES = (
    "chain-100x10",
    "wordcount-100x10",
    "chain-1000x50",
    "diamond-1000x50",
    "star-1000x50",
    "wordcount-1000x50",
    "layered-1000x50",
    "shared-1000x50",
    "layered-10000x500",
    "shared-10000x500",
)
QUICK_INSTANCES = (
    "chain-100x10",
    "wordcount-100x10",
    "layered-1000x50",
    "shared-1000x50",
)
AUTO_SECS = 1.0
BOUND_SECS, QUICK_BOUND_SECS = 120.0, 30.0
TARGET_EXECUTORS = 1000
TARGET_PCT = 95.0
TARGET_SECS = 1.0
SUMMARY_FIELDS = (
    "instance",
    "executors",
    "hosts",
    "algorithm",
    "kept_pct_of_bound",
    "seconds",
    "hosts_used",
)
"""exactly the fields of ``bench-results/scale.json``"""


@dataclass
class Row:
    """One algorithm on one instance; ``kept`` is ``None`` when it failed (``error``).
    ``seconds`` is the algorithm's own planning time summed over the topologies (as
    :func:`scheduler_py.algorithms.registry.run` measures it)."""

    instance: str
    executors: int
    hosts: int
    algorithm: str
    kept: float | None
    bound: float | None
    seconds: float | None
    hosts_used: int | None
    error: str = ""
    round_seconds: float | None = None
    """the whole :func:`plan_cluster` call: planning plus the round's verification, slot
    assignment and per-topology bound (``scheduler_py/scheduling/round.py``)"""

    @property
    def kept_pct_of_bound(self) -> float | None:
        if self.kept is None or self.bound is None:
            return None
        return 100.0 if self.bound <= 0 else 100.0 * self.kept / self.bound


def parse_instance(text: str, seed: int) -> Instance:
    """``shape-EXECUTORSxHOSTS`` (e.g. ``layered-1000x50``) → the instance of ``seed``."""
    shape, _, size = text.strip().rpartition("-")
    executors, _, hosts = size.partition("x")
    if not shape or not executors.isdigit() or not hosts.isdigit():
        raise ValueError(f"instance must look like shape-EXECUTORSxHOSTS, got {text!r}")
    return generate(shape, int(executors), int(hosts), seed)


def algorithm_choice(
    algorithm: str, instance: Instance, auto_secs: float
) -> tuple[str, dict[str, Any]]:
    """The registered algorithm and its parameters for one instance (``auto``'s budget and,
    on large instances, its candidates without those of :data:`SKIP_FROM`)."""
    if algorithm != "auto":
        return algorithm, {}
    params: dict[str, Any] = {"seconds": auto_secs / len(instance.topologies)}
    if instance.executors >= LARGE:
        params["candidates"] = ",".join(c for c in CANDIDATES if c not in SKIP_FROM)
    return algorithm, params


def skip_reason(algorithm: str, instance: Instance) -> str:
    limit = SKIP_FROM.get(algorithm)
    if limit is not None and instance.executors >= limit:
        return f"skipped from {limit} executors on: ignores its time budget, takes minutes"
    return ""


def plan_instance(instance: Instance, algorithm: str, bound: TrafficBound, auto_secs: float) -> Row:
    """Plan every topology of ``instance`` with ``algorithm`` (timed) and measure the result."""
    from scheduler_py.scheduling.documents import plan_cluster

    row = Row(
        instance.name, instance.executors, instance.hosts, algorithm, None, bound.value, None, None
    )
    row.error = skip_reason(algorithm, instance)
    if row.error:
        return row
    choice = algorithm_choice(algorithm, instance, auto_secs)
    started = time.perf_counter()
    result = plan_cluster(instance.nodes, instance.topologies, choice)
    row.round_seconds = time.perf_counter() - started
    if result.failures:
        topology_id, error = next(iter(result.failures.items()))
        row.error = (
            f"{len(result.failures)} of {len(instance.topologies)} topologies failed; "
            f"{topology_id}: {error}"
        )
        return row
    row.kept = sum(imc_gain(t, result.placements[t.id].node_of) for t in instance.topologies)
    row.hosts_used = len({n for p in result.placements.values() for n in p.nodes_used})
    row.seconds = sum(float(p.report.get("seconds", 0.0)) for p in result.placements.values())
    return row


def summary(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """The ``summary`` list of ``scale.json``: one dict per row with :data:`SUMMARY_FIELDS`."""
    return [
        {
            "instance": r.instance,
            "executors": r.executors,
            "hosts": r.hosts,
            "algorithm": r.algorithm,
            "kept_pct_of_bound": r.kept_pct_of_bound,
            "seconds": r.seconds,
            "hosts_used": r.hosts_used,
        }
        for r in rows
    ]


@dataclass(frozen=True)
class Target:
    label: str
    passed: bool | None
    detail: str


def targets(rows: Sequence[Row]) -> list[Target]:
    """The targets over the measured rows (``None``: nothing measured to judge)."""
    by_key = {(r.instance, r.algorithm): r for r in rows}
    result = []
    autos = [r for r in rows if r.algorithm == "auto" and r.executors == TARGET_EXECUTORS]
    label = (
        f"auto >= {TARGET_PCT:g} % of the bound within {TARGET_SECS:g} s on the "
        f"{TARGET_EXECUTORS:,}-executor instances"
    )
    if not autos:
        result.append(Target(label, None, "no such instance measured"))
    else:
        ok = [
            r.kept_pct_of_bound is not None
            and r.kept_pct_of_bound >= TARGET_PCT
            and r.seconds is not None
            and r.seconds <= TARGET_SECS
            for r in autos
        ]
        detail = ", ".join(
            f"{r.instance} {fmt(r.kept_pct_of_bound, '.1f')} % in {fmt(r.seconds, '.2f')} s"
            + (f" ({r.error})" if r.error else "")
            for r in autos
        )
        result.append(Target(label, all(ok), detail))
    for algorithm in ("tdls", "auto"):
        pairs = [
            (r, by_key[(r.instance, "td")])
            for r in rows
            if r.algorithm == algorithm and (r.instance, "td") in by_key
        ]
        judged = [(r, td) for r, td in pairs if td.kept is not None]
        label = f"{algorithm} never below td"
        if not judged:
            result.append(Target(label, None, "no instance where both ran"))
            continue
        below = [(r, td) for r, td in judged if r.kept is None or r.kept < td.kept * (1 - 1e-9)]
        detail = (
            f"{len(judged)} instance(s); below on: "
            + ", ".join(f"{r.instance} ({fmt(r.kept)} < {fmt(td.kept)})" for r, td in below)
            if below
            else f"{len(judged)} instance(s), at or above td on all"
        )
        result.append(Target(label, not below, detail))
    return result


def _names(text: str | None, default: Sequence[str]) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()] if text else list(default)


def run(options: BenchOptions) -> None:
    extra = options.extra
    names = _names(extra.get("instances"), QUICK_INSTANCES if options.quick else INSTANCES)
    algorithms = report.available(_names(extra.get("algorithms"), ALGORITHMS))
    auto_secs = seconds_setting(extra, "auto_secs", AUTO_SECS)
    bound_secs = seconds_setting(
        extra, "bound_secs", QUICK_BOUND_SECS if options.quick else BOUND_SECS
    )
    report.title("Kept traffic vs an upper bound at scale", PAPER)
    load_before = report.machine()["load_average"]
    rows: list[Row] = []
    bounds: dict[str, dict[str, Any]] = {}
    shapes: dict[str, dict[str, Any]] = {}
    for name in report.progress(names, desc="instances"):
        instance = parse_instance(name, options.seed)
        bound = traffic_bound(instance.combined, Budget.of(bound_secs))
        bounds[instance.name] = {
            "value": bound.value,
            "method": bound.method,
            "reason": bound.reason,
            "seconds": bound.seconds,
        }
        shapes[instance.name] = {
            "shape": instance.shape,
            "topologies": len(instance.topologies),
            "racks": len({n.rack for n in instance.nodes}),
            "cpu": sum(n.cpu for n in instance.nodes),
            "pairs": sum(len(t.pair_traffic) for t in instance.topologies),
        }
        for algorithm in algorithms:
            rows.append(plan_instance(instance, algorithm, bound, auto_secs))
    load_after = report.machine()["load_average"]

    table = Table(
        ["instance", "algorithm", "kept", "% of bound", "plan s", "round s", "hosts used", "note"],
        caption=f"seed {options.seed}; kept = on-node traffic (MB/s) summed over topologies; "
        f"auto gets {auto_secs:g} s per instance",
    )
    for r in rows:
        table.add(
            r.instance,
            r.algorithm,
            fmt(r.kept, ".1f"),
            fmt(r.kept_pct_of_bound, ".1f"),
            fmt(r.seconds, ".3f"),
            fmt(r.round_seconds, ".3f"),
            fmt(r.hosts_used),
            r.error[:90],
        )
    table.notes = [
        f"{name}: bound {fmt(b['value'], '.1f')} by {b['method']} in {b['seconds']:.1f} s"
        + (f" ({b['reason']})" if b["reason"] else "")
        + f"; {shapes[name]['topologies']} topology(ies), {shapes[name]['racks']} rack(s)"
        for name, b in bounds.items()
    ] + [
        "plan s = the algorithm's own time summed over the topologies (auto's target uses "
        "it); round s = the whole scheduling round (plan_cluster), which also verifies every "
        "plan and computes each topology's bound for its status",
        "even is Storm's default round robin: it ignores CPU capacity, so on 2-core hosts "
        "its plans are refused as over capacity",
    ]
    table.print()
    report.line()
    report.line(f"load average (1 min) before {load_before}, after {load_after}")
    report.line("targets:")
    verdicts = targets(rows)
    for target in verdicts:
        report.target_line(target.label, target.passed, target.detail)

    report.publish(
        options,
        NAME,
        PAPER,
        lambda axes: _draw(axes, rows),
        {
            "auto_secs": auto_secs,
            "bound_secs": bound_secs,
            "load_average_before": load_before,
            "load_average_after": load_after,
            "instances": {name: shapes[name] | {"bound": b} for name, b in bounds.items()},
            "rows": [asdict(r) | {"kept_pct_of_bound": r.kept_pct_of_bound} for r in rows],
            "summary": summary(rows),
            "targets": [asdict(t) for t in verdicts],
        },
        panels=2,
        width=6.5,
    )


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def _draw(axes, rows: Sequence[Row]) -> None:
    left, right = axes
    instances = list(dict.fromkeys(r.instance for r in rows))
    algorithms = list(dict.fromkeys(r.algorithm for r in rows))
    width = 0.8 / max(1, len(algorithms))
    by_key = {(r.instance, r.algorithm): r for r in rows}
    for k, algorithm in enumerate(algorithms):
        xs = [i + (k - len(algorithms) / 2) * width + width / 2 for i in range(len(instances))]
        # a failed or skipped run has no bar (NaN), not a zero one
        kept = [_or_nan(by_key[(i, algorithm)].kept_pct_of_bound) for i in instances]
        secs = [max(_or_nan(by_key[(i, algorithm)].seconds), 1e-4) for i in instances]
        left.bar(xs, kept, width=width, label=algorithm)
        right.bar(xs, secs, width=width, label=algorithm)
    for axis in (left, right):
        axis.set_xticks(range(len(instances)), instances, rotation=30, ha="right", fontsize=7)
    left.axhline(TARGET_PCT, color="tab:red", lw=0.8, ls="--", label=f"{TARGET_PCT:g} %")
    left.set_ylabel("kept traffic, % of the bound")
    left.set_title("kept traffic vs the upper bound")
    left.legend(fontsize=6, ncol=3)
    right.set_yscale("log")
    right.axhline(TARGET_SECS, color="tab:red", lw=0.8, ls="--")
    right.set_ylabel("planning seconds (wall)")
    right.set_title("planning time")
