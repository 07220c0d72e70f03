"""even, rstorm, t3, online, td, metis, optimal on the same workloads: inter-node traffic, max
node utilisation, nodes used, planning time.

One comparison table for every placement algorithm on the same generated workloads.

Algorithms: ``even``, ``rstorm``, ``t3`` (its default u_max = 0.8, and u_max = 1 so it may
fill nodes like the others), ``online``, ``td``, ``metis`` and ``optimal`` (exact; only on
families whose instances all have at most 20 executors (17 in ``--quick``), with a time
limit) — each with its registered defaults;
algorithms that are not registered are skipped with a note.

Workload families (all seedable; ``--quick`` shrinks the counts):

* ``s73`` — paper 000 §7.3's random 17-task jobs on 8 × 100 % nodes
  (:func:`~scheduler_py.bench.generators.section73_instance`);
* ``s73-het`` — the same jobs on a heterogeneous cluster with the same total capacity
  (2 × 200 %, 3 × 100 %, 2 × 50 %);
* ``pipeline`` — paper 000 §7.2's 4-group pipeline (400 executors on 8 × 100 %; quick: 40);
* ``rstorm`` — R-Storm's Linear / Diamond / Star (declared CPU and 150 MB per executor)
  on 12 machines in 2 racks (:mod:`scheduler_py.bench.paper003_rstorm`);
* ``t3-s5`` — T3's §5 diamond and star (capacity in tasks) on the heterogeneous
  3 × 6 + 3 × 4 + 4 × 2 cluster (:mod:`scheduler_py.bench.paper002_t3`);
* ``scaling`` — a 1000-executor random DAG on 50 nodes (full run only).

Metrics (the one cost module): inter-node traffic as a share of all traffic (mean over
the family's instances), maximum node utilisation (mean), nodes used (mean), planning
time (mean ms per plan), and failures (an algorithm's clear refusal, or an invalid plan).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import replace

from scheduler_py.bench import paper002_t3, paper003_rstorm, report
from scheduler_py.bench.generators import pipeline_instance, scaling_instance, section73_instance
from scheduler_py.bench.registry import BenchOptions, seconds_setting
from scheduler_py.model.cost import evaluate
from scheduler_py.model.types import Node, Problem

NAME = "compare"
PAPER = "003 R-Storm, 002 T3, Aniello et al. DEBS'13, 000 TD (comparison on shared workloads)"
ALGORITHMS = ("even", "rstorm", "t3", "online", "td", "metis", "optimal")
OPTIMAL_MAX_EXECUTORS = 20


def _variants(names: list[str]) -> list[report.Variant]:
    result = []
    for name in names:
        result.append(report.Variant(name, name, {}))
        if name == "t3":
            result.append(report.Variant("t3 u=1", "t3", {"u_max": 1.0}))
    return result


def _het_nodes() -> tuple[Node, ...]:
    caps = (200.0, 200.0, 100.0, 100.0, 100.0, 50.0, 50.0)
    return tuple(Node(f"h{i}", cap, slots=4) for i, cap in enumerate(caps))


def _with_workers(problem: Problem) -> Problem:
    """Storm's topology.workers = node count, so ``even`` spreads as in the papers."""
    return replace(problem, topology=replace(problem.topology, workers=len(problem.nodes)))


def workloads(options: BenchOptions) -> dict[str, Callable[[], list[Problem]]]:
    seed, quick = options.seed, options.quick
    count = 4 if quick else 30

    def s73() -> list[Problem]:
        return [section73_instance(seed + i) for i in range(count)]

    def s73_het() -> list[Problem]:
        return [
            _with_workers(replace(section73_instance(seed + i), nodes=_het_nodes()))
            for i in range(count)
        ]

    def pipeline() -> list[Problem]:
        tasks = 10 if quick else 100
        return [pipeline_instance(4, tasks, 8, 100.0, seed)]

    def rstorm() -> list[Problem]:
        nodes = paper003_rstorm.cluster()
        return [Problem(nodes, paper003_rstorm.topology(n)) for n in ("Linear", "Diamond", "Star")]

    def t3_s5() -> list[Problem]:
        sizes = (14, 24) if quick else (14, 20, 26, 32)
        return [
            _with_workers(paper002_t3.problem(layout, "het", n))
            for layout in ("diamond", "star")
            for n in sizes
        ]

    def scaling() -> list[Problem]:
        return [scaling_instance(1000, seed=seed)]

    result = {
        "s73": s73,
        "s73-het": s73_het,
        "pipeline": pipeline,
        "rstorm": rstorm,
        "t3-s5": t3_s5,
    }
    if not quick:
        result["scaling"] = scaling
    return result


def run(options: BenchOptions) -> None:
    report.title("Algorithms compared on shared workloads", PAPER)
    requested = options.extra.get("algorithms")
    names = report.available(requested.split(",") if requested else list(ALGORITHMS))
    variants = _variants(names)
    optimal_limit = seconds_setting(
        options.extra, "optimal_time_limit", 2.0 if options.quick else 10.0
    )
    optimal_max = int(
        options.extra.get("optimal_max_executors", 17 if options.quick else OPTIMAL_MAX_EXECUTORS)
    )
    results: dict[str, dict[str, dict[str, object]]] = {}
    for family, make in workloads(options).items():
        problems = make()
        table = report.Table(
            ["algorithm", "inter-node", "vs even", "max util", "nodes", "ms/plan", "failed"],
            caption=f"{family}: {len(problems)} instance(s), "
            f"{statistics.mean(len(p.topology.executors) for p in problems):.0f} executors, "
            f"{len(problems[0].nodes)} nodes",
        )
        rows: dict[str, dict[str, object]] = {}
        small = all(len(p.topology.executors) <= optimal_max for p in problems)
        for variant in report.progress(variants, desc=family):
            shares, utils, used, seconds, failures = [], [], [], [], []
            for problem in problems:
                params = dict(variant.params)
                if variant.algorithm == "optimal":
                    if not small:
                        break
                    params["time_limit"] = optimal_limit
                outcome = report.attempt(variant.algorithm, problem, params)
                seconds.append(outcome.seconds)
                if not outcome.ok:
                    failures.append(outcome.error or "failed")
                    continue
                evaluation = evaluate(problem, outcome.placement)
                total = evaluation.total_traffic
                shares.append(evaluation.internode_traffic / total if total > 0 else 0.0)
                utils.append(evaluation.max_node_utilisation)
                used.append(evaluation.nodes_used)
            if not seconds:
                rows[variant.label] = {"skipped": True}
                continue
            rows[variant.label] = {
                "internode_share": statistics.mean(shares) if shares else None,
                "max_utilisation": statistics.mean(utils) if utils else None,
                "nodes_used": statistics.mean(used) if used else None,
                "ms_per_plan": 1000 * statistics.mean(seconds),
                "failures": len(failures),
                "instances": len(seconds),
                "first_failure": failures[0] if failures else None,
            }
        even = rows.get("even", {}).get("internode_share")
        for label, row in rows.items():
            if row.get("skipped"):
                table.add(label, None, None, None, None, None, "skipped")
                continue
            share = row["internode_share"]
            table.add(
                label,
                report.pct(share),
                report.ratio(share, even),
                report.pct(row["max_utilisation"], 0),
                report.fmt(row["nodes_used"], ".1f"),
                report.fmt(row["ms_per_plan"], ".2f"),
                f"{row['failures']}/{row['instances']}",
            )
        table.notes.append(
            "inter-node: traffic between nodes as a share of all traffic (lower is better); "
            "inter-node, max util and nodes are means over the instances the algorithm "
            "placed; vs even: ratio to even's share; failed: clear refusals "
            "(InfeasibleError) or invalid plans (even ignores capacity)"
        )
        if "optimal" in names:
            table.notes.append(
                f"optimal: only families whose instances all have ≤ {optimal_max} executors, "
                f"time limit {optimal_limit:g} s"
            )
        table.print()
        for label, row in rows.items():
            if row.get("first_failure"):
                report.line(f"  {label} failure example: {str(row['first_failure'])[:160]}")
        results[family] = rows

    def draw(axes) -> None:
        families = list(results)
        labels = [v.label for v in variants]
        width = 0.8 / max(1, len(labels))
        for i, label in enumerate(labels):
            values = [
                (results[f].get(label, {}).get("internode_share") or 0.0) * 100 for f in families
            ]
            axes.bar([x + i * width for x in range(len(families))], values, width, label=label)
        axes.set_xticks([x + 0.4 - width / 2 for x in range(len(families))], families)
        axes.set_ylabel("inter-node traffic (% of all)")
        axes.set_title("inter-node traffic by workload (lower is better)")
        axes.legend(fontsize=7, ncol=2)

    report.publish(options, NAME, PAPER, draw, {"results": results}, width=9.0)
