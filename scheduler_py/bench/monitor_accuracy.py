"""How close the counts-mode pair traffic (estimated from Storm's per-task counts) is to the
exact counts of the per-tuple hook, on the repository's topologies with load-aware messaging
on and off, and whether the plan chosen from the estimate is as good as the exact one's.

Both modes at once (``docs/monitoring-format.md`` §1.1: exact mode with the reporter
configured): every window record carries Storm's counts (``task_counts``) *and* the hook's
exact per-pair traffic, so one run gives both. For each topology the records of the measured
interval are read and

* the exact matrix is the hook's traffic on the topology's routes, the estimate is
  ``monitoring/pair_estimate.py`` from the counts alone (``use_exact=False``); both summed per
  executor pair, user components only (the acking streams are priced apart). **Weighted
  relative error** = Σ |estimate − exact| / Σ exact over the executor pairs;
* per-executor CPU (% of a core over the interval) is reported beside;
* **plans**: the brain's default algorithm (``td``; ``--set algorithm=``) plans the topology
  twice on three nodes that each hold 40 % of its measured CPU (so it must be split), once with
  the exact and once with the estimated pairs; both placements are priced under the exact
  matrix (inter-node tuples/s, ``model/cost.py``). Ratio = estimate's plan / exact's plan.
  Beside it, the same ratio for a plan from the *exact* matrix of the interval's first half
  only: how far the algorithm's choice moves with the window-to-window noise of exact counts
  (when that moves as much, a miss is the algorithm's sensitivity, not the estimate's).

Targets (PASS/MISS): error <= 10 % on every topology, plan within 2 % of the exact plan's
predicted cost.

Sources (``--set source=``): ``live`` (default): a local cluster (``deploy/cluster-up.sh``,
the brain and the worker monitor; run it under the cluster lock) runs the JVM topologies
(``topologies/jvm``: word count, Linear, Diamond, Star, ``topology.workers=3``, spouts at
``rate`` tuples/s per executor, ``scheduler.monitor.mode=exact``), one at a time, with
``topology.disable.loadaware.messaging`` false and true; after ``warmup`` seconds the records
of ``interval`` seconds are read from ZooKeeper. ``offline``: the same comparison on synthetic
records with a known truth (``monitoring/synthetic_counts.py``: Storm's routing and its
sampled counters simulated, 3 workers on 3 hosts), for the unit test and for a quick look.
Other options: ``topologies`` (comma-separated), ``warmup``, ``interval``, ``rate``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scheduler_py.bench import report
from scheduler_py.bench.registry import BenchOptions, seconds_setting
from scheduler_py.bench.report import Table, fmt, pct
from scheduler_py.monitoring.records import WindowRecord

NAME = "monitor_accuracy"
PAPER = "docs/monitoring.md: counts-mode accuracy (estimated vs exact pair traffic, plans)"
TOPOLOGIES = ("wordcount", "linear", "diamond", "star")
ERROR_TARGET = 0.10
PLAN_TARGET = 0.02
NODES = 3
NODE_SHARE = 0.4
"""Each node holds this share of the topology's measured CPU (at least a third of it plus the
largest executor, so that few large executors still pack): the plan must split it."""
WARMUP_S, QUICK_WARMUP_S = 40.0, 30.0
INTERVAL_S, QUICK_INTERVAL_S = 60.0, 40.0
SPOUT_RATE = 2000
"""tuples/s per spout executor in the live runs (``bench.spout.rate``)"""
WINDOW_MS = 10_000


# --------------------------------------------------------------------------- analysis


def analyse(records: Sequence[WindowRecord], algorithm: str = "td") -> dict[str, Any]:
    """Estimated vs exact pairs, CPU per executor and the two plans of one run's records."""
    from scheduler_py.monitoring.pair_estimate import estimate_pairs

    executor_of, component_of = _executors(records)
    exact = estimate_pairs(records, use_exact=True)
    estimate = estimate_pairs(records, use_exact=False)
    x = _by_executor(exact.tuples_per_s, executor_of, component_of)
    e = _by_executor(estimate.tuples_per_s, executor_of, component_of)
    total = sum(x.values())
    error = sum(abs(e.get(k, 0.0) - x.get(k, 0.0)) for k in x.keys() | e.keys()) / total
    cpu = _cpu(records)
    plans = _plans(records, cpu, x, e, algorithm)
    ends = sorted({r.window_end_ms for r in records})
    half = [r for r in records if r.window_end_ms <= ends[(len(ends) - 1) // 2]]
    if len(ends) > 1:
        noise = estimate_pairs(half, use_exact=True)
        x_half = _by_executor(noise.tuples_per_s, executor_of, component_of)
        plans["plan_ratio_exact_half"] = _plans(records, cpu, x, x_half, algorithm).get(
            "plan_ratio"
        )
    return {
        "exact_source": exact.source,
        "estimate_source": estimate.source,
        "declared_edges": [d.label + ": " + d.reason for d in estimate.declared],
        "executor_pairs": len(x),
        "exact_tuples_per_s": total,
        "estimated_tuples_per_s": sum(e.values()),
        "weighted_relative_error": error if total > 0 else None,
        "executor_cpu_percent": {f"{a}-{b}": v for (a, b), v in sorted(cpu.items())},
        "mean_executor_cpu_percent": statistics.fmean(cpu.values()) if cpu else None,
        **plans,
    }


def _executors(records: Sequence[WindowRecord]):
    executor_of: dict[int, tuple[int, int]] = {}
    component_of: dict[int, str] = {}
    for record in records:
        for ex in record.executors:
            for task in ex.tasks:
                executor_of[task] = (ex.task_start, ex.task_end)
                component_of[task] = ex.component
    return executor_of, component_of


def _by_executor(pairs, executor_of, component_of) -> dict[tuple, float]:
    result: dict[tuple, float] = defaultdict(float)
    for (src, dst), rate in pairs.items():
        a, b = component_of.get(src, "__"), component_of.get(dst, "__")
        if a.startswith("__") or b.startswith("__"):
            continue
        result[(executor_of[src], executor_of[dst])] += rate
    return {k: v for k, v in result.items() if v > 0}


def _cpu(records: Sequence[WindowRecord]) -> dict[tuple[int, int], float]:
    used: dict[tuple[int, int], float] = defaultdict(float)
    seen: dict[tuple[int, int], float] = defaultdict(float)
    for record in records:
        for ex in record.executors:
            if ex.component.startswith("__"):
                continue
            key = (ex.task_start, ex.task_end)
            used[key] += ex.thread_cpu_ms + ex.subprocess_cpu_ms
            seen[key] += record.duration_ms
    return {k: 100.0 * used[k] / seen[k] for k in used if seen[k] > 0}


def _plans(records, cpu, exact, estimate, algorithm: str) -> dict[str, Any]:
    from scheduler_py.bench.report import attempt
    from scheduler_py.model.cost import evaluate

    problem_x = _problem(records, cpu, exact)
    problem_e = _problem(records, cpu, estimate)
    plan_x, plan_e = attempt(algorithm, problem_x), attempt(algorithm, problem_e)
    if plan_x.placement is None or plan_e.placement is None:
        return {"plan_error": plan_x.error or plan_e.error}
    cost_x = evaluate(problem_x, plan_x.placement).internode_traffic
    cost_e = evaluate(problem_x, plan_e.placement).internode_traffic
    ratio = cost_e / cost_x if cost_x > 0 else (1.0 if cost_e <= 0 else float("inf"))
    same = dict(plan_x.placement.node_of) == dict(plan_e.placement.node_of)
    return {
        "plan_cost_exact": cost_x,
        "plan_cost_estimated": cost_e,
        "plan_ratio": ratio,
        "same_plan": same,
    }


def _problem(records, cpu, pairs):
    from scheduler_py.model.types import Component, Edge, Node, Problem, Topology, executor_id

    by_component: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for record in records:
        for ex in record.executors:
            key = (ex.task_start, ex.task_end)
            if not ex.component.startswith("__") and key not in by_component[ex.component]:
                by_component[ex.component].append(key)
    ids = {}
    for component, keys in by_component.items():
        for index, key in enumerate(sorted(keys)):
            ids[key] = executor_id(component, index)
    routes = {(r.component, r.target): r.grouping for rec in records for r in rec.routes}
    targets = {b for _, b in routes}
    components = tuple(
        Component(
            c,
            len(keys),
            cpu=sum(cpu.get(k, 0.0) for k in keys),
            memory_mb=128.0 * len(keys),
            is_spout=c not in targets,
        )
        for c, keys in sorted(by_component.items())
    )
    total = sum(cpu.values()) or 1.0
    largest = max(cpu.values(), default=1.0)
    capacity = max(NODE_SHARE * total, total / NODES + largest)
    topology = Topology(
        "accuracy",
        components,
        tuple(Edge(a, b, 1.0, g) for (a, b), g in sorted(routes.items())),
        workers=NODES,
        executor_cpu={ids[k]: v for k, v in cpu.items() if k in ids},
        pair_traffic={(ids[s], ids[d]): r for (s, d), r in pairs.items() if s in ids and d in ids},
    )
    nodes = tuple(Node(f"node-{i}", cpu=capacity, slots=4) for i in range(NODES))
    return Problem(nodes, topology)


# --------------------------------------------------------------------------- sources


def offline_records(kind: str, load_aware: bool, seed: int) -> list[WindowRecord]:
    """Synthetic records of ``kind`` in both modes (``monitoring/synthetic_counts.py``)."""
    from scheduler_py.monitoring.synthetic_counts import SHAPES, Layout, simulate

    end = 1_800_000_000_000
    return simulate(
        SHAPES[kind], Layout(workers=3, hosts=3), end, load_aware=load_aware, seed=seed
    ).records


def live_runs(
    kinds: Sequence[str], settings: Mapping[str, Any]
) -> list[tuple[str, bool, list[WindowRecord], dict[str, Any]]]:
    """Each topology with load-aware messaging on and off on one local cluster."""
    from scheduler_py.bench.local_cluster import LocalCluster, say
    from scheduler_py.devtools import jvm_topologies

    results = []
    with tempfile.TemporaryDirectory(prefix="monitor-accuracy-") as scratch:
        cluster = LocalCluster(Path(scratch) / "cluster")
        cluster.up()
        try:
            for index, kind in enumerate(kinds):
                for aware in (True, False):
                    name = f"acc-{kind}-{'la' if aware else 'nola'}-{index}"
                    conf = {
                        "topology.workers": NODES,
                        "scheduler.monitor.mode": "exact",
                        "topology.disable.loadaware.messaging": not aware,
                        "bench.spout.rate": settings["rate"],
                    }
                    say(f"  {name}: submitting")
                    topology_id = jvm_topologies.submit(kind, name, conf, env=cluster.env)
                    try:
                        start_ms = int(time.time() * 1000 + settings["warmup"] * 1000)
                        time.sleep(settings["warmup"] + settings["interval"] + WINDOW_MS / 1000)
                        end_ms = int(time.time() * 1000)
                        records = _read_records(cluster, topology_id, start_ms, end_ms)
                    finally:
                        cluster.kill(name)
                    workers = len({r.worker for r in records})
                    say(f"  {name}: {len(records)} records of {workers} worker(s)")
                    info = {"topology_id": topology_id, "workers": workers}
                    results.append((kind, aware, records, info))
        finally:
            cluster.down()
    return results


def _read_records(cluster, topology_id: str, start_ms: int, end_ms: int) -> list[WindowRecord]:
    from scheduler_py.monitoring.documents import parse_windows
    from scheduler_py.monitoring.traffic_source import kept_in_window
    from scheduler_py.monitoring.zk import MonitorStore, close_quietly, connect

    client = connect(f"{cluster.env['STORM_ZK_HOST']}:{cluster.env['STORM_ZK_PORT']}")
    try:
        store = MonitorStore(client, cluster.env.get("SCHEDULER_MONITOR_ROOT", "/scheduler-py"))
        parsed = parse_windows(store.load_windows(topology_id, {}))
    finally:
        close_quietly(client)
    kept = kept_in_window(parsed.records, start_ms).values()
    return [r for r in kept if r.window_start_ms >= start_ms and r.window_end_ms <= end_ms]


# --------------------------------------------------------------------------- benchmark


def run(options: BenchOptions) -> None:
    extra = options.extra
    source = str(extra.get("source", "live"))
    if source not in ("live", "offline"):
        raise ValueError(f"source must be live or offline, got {source!r}")
    kinds = [k for k in str(extra.get("topologies", ",".join(TOPOLOGIES))).split(",") if k]
    unknown = sorted(set(kinds) - set(TOPOLOGIES))
    if unknown:
        raise ValueError(f"unknown topologies {unknown}; known: {', '.join(TOPOLOGIES)}")
    settings = {
        "warmup": seconds_setting(
            extra, "warmup", QUICK_WARMUP_S if options.quick else WARMUP_S, allow_zero=True
        ),
        "interval": seconds_setting(
            extra, "interval", QUICK_INTERVAL_S if options.quick else INTERVAL_S
        ),
        "rate": int(extra.get("rate", SPOUT_RATE)),
        "algorithm": str(extra.get("algorithm", "td")),
    }
    report.title("Counts-mode pair traffic vs the exact hook", PAPER)
    report.line(
        f"source {source}; topologies {', '.join(kinds)}, load-aware messaging on and off; "
        f"plans by {settings['algorithm']} on {NODES} nodes of {NODE_SHARE:.0%} of the CPU each"
    )
    if source == "offline":
        runs = [
            (kind, aware, offline_records(kind, aware, options.seed + i), {})
            for i, kind in enumerate(kinds)
            for aware in (True, False)
        ]
    else:
        report.line(
            f"live: warm-up {settings['warmup']:.0f} s, interval {settings['interval']:.0f} s, "
            f"{settings['rate']} tuples/s per spout executor, scheduler.monitor.mode=exact"
        )
        runs = live_runs(kinds, settings)
    if source == "live":
        _save(options, runs)
    results = []
    for kind, aware, records, info in runs:
        row = {"topology": kind, "load_aware": aware, "records": len(records), **info}
        if records:
            row.update(analyse(records, settings["algorithm"]))
        results.append(row)
    _print(results)
    targets = _targets(results)
    report.publish(
        options,
        NAME,
        PAPER,
        lambda axes: _draw(axes, results),
        {
            "source": source,
            "settings": settings,
            "results": results,
            "summary": {
                "max_weighted_relative_error": _max(results, "weighted_relative_error"),
                "max_plan_ratio": _max(results, "plan_ratio"),
            },
            "targets": targets,
        },
        panels=2,
    )


def _save(options: BenchOptions, runs) -> Path:
    """The live runs' records (contract JSON), for analysing them again offline."""
    import gzip
    import json

    from scheduler_py.monitoring.records import record_document

    options.output_dir.mkdir(parents=True, exist_ok=True)
    path = options.output_dir / f"{NAME}-records.json.gz"
    payload = [
        {"topology": kind, "load_aware": aware, "records": [record_document(r) for r in records]}
        for kind, aware, records, _ in runs
    ]
    with gzip.open(path, "wt") as handle:
        json.dump(payload, handle)
    return path


def _max(results: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in results if r.get(key) is not None]
    return max(values) if values else None


def _print(results: list[dict[str, Any]]) -> None:
    table = Table(
        [
            "topology",
            "load-aware",
            "records",
            "pairs",
            "exact tuples/s",
            "weighted rel. error",
            "mean executor CPU %",
            "plan cost exact",
            "plan cost est.",
            "ratio",
            "ratio, exact half",
        ],
        caption="estimated (Storm's counts) vs exact (hook) pair traffic, per executor pair",
        notes=[
            "plan cost: inter-node tuples/s of the plan under the exact matrix",
            *(
                f"{r['topology']} (load-aware {r['load_aware']}): declared {d}"
                for r in results
                for d in r.get("declared_edges", [])
            ),
        ],
    )
    for r in results:
        table.add(
            r["topology"],
            "on" if r["load_aware"] else "off",
            str(r["records"]),
            str(r.get("executor_pairs", "–")),
            fmt(r.get("exact_tuples_per_s"), ".0f"),
            pct(r.get("weighted_relative_error"), 2),
            fmt(r.get("mean_executor_cpu_percent"), ".1f"),
            fmt(r.get("plan_cost_exact"), ".0f"),
            fmt(r.get("plan_cost_estimated"), ".0f"),
            fmt(r.get("plan_ratio"), ".3f"),
            fmt(r.get("plan_ratio_exact_half"), ".3f"),
        )
    table.print()


def _targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    report.line()
    report.line("targets:")
    targets = []

    def target(text: str, passed: bool | None, detail: str) -> None:
        report.target_line(text, passed, detail)
        targets.append({"target": text, "passed": passed, "detail": detail})

    errors = [r.get("weighted_relative_error") for r in results]
    worst = max((e for e in errors if e is not None), default=None)
    target(
        f"estimated pair traffic within {ERROR_TARGET:.0%} of exact on every topology",
        None if worst is None or None in errors else worst <= ERROR_TARGET,
        f"worst {pct(worst, 2)}",
    )
    ratios = [r.get("plan_ratio") for r in results]
    worst_ratio = max((x for x in ratios if x is not None), default=None)
    target(
        f"plan from the estimate within {PLAN_TARGET:.0%} of the exact plan's predicted cost",
        None if worst_ratio is None or None in ratios else worst_ratio <= 1.0 + PLAN_TARGET + 1e-12,
        f"worst ratio {fmt(worst_ratio, '.3f')}",
    )
    return targets


def _draw(axes: Any, results: list[dict[str, Any]]) -> None:
    left, right = axes
    labels = [f"{r['topology']}\n{'LA' if r['load_aware'] else 'no LA'}" for r in results]
    xs = range(len(results))
    left.bar(xs, [100 * (r.get("weighted_relative_error") or 0.0) for r in results])
    left.axhline(100 * ERROR_TARGET, color="red", linestyle="--", label="target")
    left.set_xticks(list(xs), labels, fontsize=7)
    left.set_ylabel("weighted relative error (%)")
    left.set_title("estimated vs exact pair traffic")
    left.legend()
    right.bar(xs, [r.get("plan_ratio") or 0.0 for r in results])
    right.axhline(1.0 + PLAN_TARGET, color="red", linestyle="--", label="target")
    right.set_xticks(list(xs), labels, fontsize=7)
    right.set_ylabel("plan cost: estimate's / exact's")
    right.set_title("plans under the exact matrix")
    right.legend()
