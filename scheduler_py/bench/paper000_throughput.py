"""§7.2: allocations/s of td and tl on the 4×100 pipeline (paper TD 264/s, target ≥ 2,640/s) and
td's planning time up to 10,000 executors on 500 nodes (target < 1 s).

§7.2 of paper 000: allocation throughput, plus a scaling curve.

**Throughput** (``docs/algorithms/000-topdown.md``). The input is a pipeline of 4 groups × 100
tasks, every group at
PC 100 %, IMC ≈ 10 MB/s per edge (:func:`~scheduler_py.bench.generators.pipeline_instance`),
on 8 × 100 % and on 10 × 50 %. For each duration T the algorithm is invoked back to back
with a fresh allocation each time (``info.plan(problem)``: it rebuilds its queues and node
heap on every call; the immutable problem is shared) and the invocations that *complete
successfully* within T are counted, the process pinned to one core. The first placement
is verified with the cost module outside the timed loop; an algorithm whose placement is
invalid counts no successes.

**Scaling.** td's planning time on
:func:`~scheduler_py.bench.generators.scaling_instance` for 100 … 10,000 executors on
executors/20 nodes (up to 500), median of repetitions; target 10,000 executors on 500
nodes in under 1 s.

Options (``--set key=value``): ``durations`` (comma-separated seconds), ``algorithms``
(throughput, default ``td,tl``), ``scaling`` (default ``even,td,tdls``), ``sizes``.

References: Chatzistergiou & Viglas, CIKM'14, §7.2 and Figure 5; notes ``000_topdown.md``
§4.2, §5.2.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from scheduler_py.bench import report
from scheduler_py.bench.generators import (
    SCALING_EXECUTORS,
    pipeline_instance,
    scaling_instance,
    scaling_nodes,
)
from scheduler_py.bench.registry import BenchOptions, seconds_list_setting
from scheduler_py.bench.report import MISSING, Table, fmt, ratio
from scheduler_py.model.types import Problem

NAME = "paper000_throughput"
PAPER = "paper 000 §7.2 (throughput, Figure 5) + scaling"
DURATIONS, QUICK_DURATIONS = (1.0, 2.0, 5.0, 10.0), (0.2, 0.5)
SETTINGS = (("8 × 100 %", 8, 100.0), ("10 × 50 %", 10, 50.0))
ALGORITHMS = ("td", "tl")
SCALING_ALGORITHMS = ("even", "td", "tdls")
QUICK_SIZES = (100, 500, 1000)
REPEATS, QUICK_REPEATS = 3, 1
SCALING_GIVE_UP_S, QUICK_GIVE_UP_S = 30.0, 5.0
"""Larger sizes are skipped for an algorithm once one run takes longer than this."""

PAPER_RATE = {"td": 5012 / 19}  # ≈ 264 allocations/s (i3-2100, likely JVM)
PAPER_RATE_NOTE = {"tl": "≈ 2-3 (implied)"}
NOTES_RATE = {
    ("8 × 100 %", "td"): 9129,
    ("8 × 100 %", "tl"): 61.8,
    ("10 × 50 %", "td"): 7798,
    ("10 × 50 %", "tl"): 56.7,
}
"""The notes' prototype (CPython 3.11, one core of an AMD EPYC VM, 10 s runs; TL-IMC lex)."""
TARGET_RATE = 2640.0  # 10 × the paper's TD
TARGET_SCALING = (10000, 500, 1.0)  # executors, nodes, seconds


def count_completed(plan, problem: Problem, duration: float) -> dict[str, Any]:
    """Invocations completed within ``duration`` wall-clock seconds: ``completed``
    (successful), ``failed``, and ``cpu_seconds`` (this process's CPU time meanwhile)."""
    ok = failed = 0
    clock = time.perf_counter
    cpu_started = time.process_time()
    deadline = clock() + duration
    while True:
        try:
            plan(problem)
            success = True
        except Exception:  # SchedulingError = allocation failure; anything else too
            success = False
        if clock() > deadline:
            break
        if success:
            ok += 1
        else:
            failed += 1
    cpu = time.process_time() - cpu_started
    return {"seconds": duration, "completed": ok, "failed": failed, "cpu_seconds": cpu}


def run(options: BenchOptions) -> None:
    durations = seconds_list_setting(
        options.extra, "durations", QUICK_DURATIONS if options.quick else DURATIONS
    )
    report.title("Allocation throughput on the 4 × 100 pipeline, and scaling", PAPER)
    names = report.available(_names(options.extra.get("algorithms"), ALGORITHMS))
    throughput: dict[str, dict[str, Any]] = {}
    with report.OneCore() as pinned:
        for setting, nodes, capacity in SETTINGS:
            problem = pipeline_instance(
                groups=4, tasks=100, nodes=nodes, capacity=capacity, seed=options.seed
            )
            for name in names:
                throughput[f"{setting}|{name}"] = _throughput(name, problem, durations, setting)
        scaling = _scaling(options)

    _print_throughput(throughput, names, durations, pinned.core)
    _print_scaling(scaling)

    report.line()
    report.line("targets:")
    td = throughput.get(f"{SETTINGS[0][0]}|td")
    verdicts = []
    label = f"td >= {TARGET_RATE:,.0f} allocations/s on the 4 × 100 pipeline, 8 × 100 % (CPU time)"
    if td is None:
        report.target_line(label, None, "td not registered")
        verdicts.append({"target": label, "passed": None})
    else:
        passed = td["valid"] and (td["cpu_rate"] or 0.0) >= TARGET_RATE
        cpu_rate = f"{td['cpu_rate']:,.0f}" if td["cpu_rate"] else MISSING
        report.target_line(
            label,
            passed,
            f"{cpu_rate} per CPU-second ({ratio(td['cpu_rate'], PAPER_RATE['td'], 1)} paper), "
            f"peak {td['peak_rate']:,.0f}/s wall",
        )
        verdicts.append({"target": label, "passed": passed, "rate": td["cpu_rate"]})
    executors, nodes, limit = TARGET_SCALING
    label = f"td plans {executors:,} executors on {nodes} nodes in < {limit:g} s (CPU time)"
    point = scaling.get("td", {}).get(executors)
    if point is None or point.get("seconds") is None:
        why = "td not registered" if "td" not in scaling else "size not run (--quick?)"
        report.target_line(label, None, why)
        verdicts.append({"target": label, "passed": None})
    else:
        passed = point["ok"] and point["cpu_seconds"] < limit
        report.target_line(
            label,
            passed,
            f"{point['cpu_seconds']:.3f} s CPU, {point['seconds']:.3f} s wall (medians)",
        )
        verdicts.append({"target": label, "passed": passed, "seconds": point["cpu_seconds"]})

    report.publish(
        options,
        NAME,
        PAPER,
        lambda axes: _draw(axes, throughput, scaling, durations),
        {
            "durations": list(durations),
            "pinned_core": pinned.core,
            "throughput": throughput,
            "scaling": {a: {str(k): v for k, v in pts.items()} for a, pts in scaling.items()},
            "targets": verdicts,
        },
        panels=2,
    )


def _floats(text: str | None) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(",") if x.strip()) if text else ()


def _names(text: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    if not text:
        return default
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _throughput(
    name: str, problem: Problem, durations: tuple[float, ...], setting: str
) -> dict[str, Any]:
    first = report.attempt(name, problem)
    links = (
        report.collocated_links(problem.topology, first.placement.node_of)
        if first.ok and first.placement is not None
        else None
    )
    plan = report.info(name).plan
    counts = []
    for duration in report.progress(durations, desc=f"{name} {setting}"):
        if first.ok:
            counts.append(count_completed(plan, problem, duration))
        else:
            counts.append({"seconds": duration, "completed": 0, "failed": 0, "cpu_seconds": 0})
    longest = counts[-1]
    return {
        "setting": setting,
        "algorithm": name,
        "valid": first.ok,
        "error": first.error,
        "phi": first.phi if first.ok else None,
        "links": links,
        "runs": counts,
        "rate": longest["completed"] / longest["seconds"],
        "peak_rate": max(run["completed"] / run["seconds"] for run in counts),
        "cpu_rate": (
            longest["completed"] / longest["cpu_seconds"] if longest["cpu_seconds"] else None
        ),
    }


def _print_throughput(
    results: dict[str, dict[str, Any]], names: list[str], durations, core: int | None
) -> None:
    headers = [
        "setting",
        "algorithm",
        *(f"done in {d:g} s" for d in durations),
        "alloc/s",
        "peak /s",
        "/ CPU-s",
        "paper /s",
        "notes /s",
        "× paper",
        "φ MB/s",
        "links",
        "× tl",
    ]
    table = Table(
        headers,
        caption="4 groups × 100 tasks pipeline, group PC 100 %, IMC ≈ 10 MB/s; successful "
        f"allocations completed (alloc/s over the longest run); pinned to CPU {core}",
    )
    for setting, _, _ in SETTINGS:
        tl = results.get(f"{setting}|tl")
        for name in names:
            r = results[f"{setting}|{name}"]
            paper = PAPER_RATE.get(name)
            table.add(
                setting,
                name,
                *(str(run["completed"]) for run in r["runs"]),
                fmt(r["rate"], ",.1f"),
                fmt(r["peak_rate"], ",.1f"),
                fmt(r["cpu_rate"], ",.1f"),
                fmt(paper, ",.0f") if paper else PAPER_RATE_NOTE.get(name),
                fmt(NOTES_RATE.get((setting, name)), ",.1f"),
                ratio(r["cpu_rate"], paper, 1) if paper else None,
                fmt(r["phi"], ".2f"),
                fmt(r["links"], ",.0f"),
                ratio(r["cpu_rate"], tl["cpu_rate"], 0)
                if tl and tl["cpu_rate"] and name != "tl"
                else None,
            )
    table.notes = [
        "paper: TD 5012 allocations in 19 s on an i3-2100; TL two orders of magnitude "
        "slower; node count not given (``docs/algorithms/000-topdown.md``)",
        "alloc/s = successful allocations / T of the longest run; peak /s = best over the "
        "runs; / CPU-s = per second of this process's CPU time in the longest run, not "
        "inflated by other load (× paper, × tl and the target use it)",
        "links = collocated task links (10,000 = every pair of one edge collocated)",
    ]
    table.print()
    for r in results.values():
        if r["error"]:
            report.line(f"  {r['algorithm']} ({r['setting']}): {r['error'][:200]}")


def _scaling(options: BenchOptions) -> dict[str, dict[int, dict[str, Any]]]:
    sizes = _floats(options.extra.get("sizes")) or (
        QUICK_SIZES if options.quick else SCALING_EXECUTORS
    )
    names = report.available(_names(options.extra.get("scaling"), SCALING_ALGORITHMS))
    repeats = QUICK_REPEATS if options.quick else REPEATS
    give_up = QUICK_GIVE_UP_S if options.quick else SCALING_GIVE_UP_S
    results: dict[str, dict[int, dict[str, Any]]] = {name: {} for name in names}
    stopped: set[str] = set()
    for size in report.progress([int(s) for s in sizes], desc="scaling"):
        problem = scaling_instance(size, seed=options.seed)
        for name in names:
            point: dict[str, Any] = {
                "executors": size,
                "nodes": len(problem.nodes),
                "groups": len(problem.topology.components),
            }
            if name in stopped:
                point.update(seconds=None, ok=False, error="skipped: a smaller size was too slow")
                results[name][size] = point
                continue
            outcomes = [report.attempt(name, problem) for _ in range(repeats)]
            times = [o.seconds for o in outcomes]
            cpu_times = [o.cpu_seconds for o in outcomes]
            last = outcomes[-1]
            total = sum(e.traffic for e in problem.topology.merged_edges)
            point.update(
                seconds=statistics.median(times),
                cpu_seconds=statistics.median(cpu_times),
                all_seconds=times,
                ok=last.ok,
                error=last.error,
                phi=last.phi if last.ok else None,
                phi_share=last.phi / total if last.ok and total else None,
            )
            results[name][size] = point
            if max(times) > give_up:
                stopped.add(name)
    return results


def _print_scaling(results: dict[str, dict[int, dict[str, Any]]]) -> None:
    if not results:
        return
    sizes = sorted({s for pts in results.values() for s in pts})
    table = Table(
        ["executors", "nodes", "groups"]
        + [h for name in results for h in (f"{name} ms", f"{name} CPU ms", f"{name} φ/total")]
        + (["td / even"] if "td" in results and "even" in results else []),
        caption="Scaling: planning time (median of repetitions) on "
        "scaling_instance(executors), executors/20 nodes × 100 %, load 62.5 %",
    )
    for size in sizes:
        any_point = next(pts[size] for pts in results.values() if size in pts)
        cells = [f"{size:,}", str(any_point["nodes"]), str(any_point["groups"])]
        for name in results:
            p = results[name].get(size, {})
            seconds = p.get("seconds")
            failed = seconds is not None and not p.get("ok")
            cells.append(
                (fmt(1000 * seconds, ",.1f") + (" (fail)" if failed else ""))
                if seconds is not None
                else None
            )
            cpu = p.get("cpu_seconds")
            cells.append(fmt(1000 * cpu, ",.1f") if cpu is not None else None)
            cells.append(report.pct(p.get("phi_share")))
        if "td" in results and "even" in results:
            td, even = results["td"].get(size, {}), results["even"].get(size, {})
            cells.append(ratio(td.get("cpu_seconds"), even.get("cpu_seconds"), 1))
        table.add(*cells)
    table.notes = [
        f"nodes = executors / 20 (at most {scaling_nodes(10**9)}); φ/total = share of all "
        "traffic kept on-node; (fail) = the placement failed or was invalid; ms = wall "
        "clock, CPU ms = this process's CPU time (td / even uses it)"
    ]
    table.print()
    for name, pts in results.items():
        for size, p in sorted(pts.items()):
            if p.get("error"):
                report.line(f"  {name} at {size:,}: {str(p['error'])[:200]}")
                break


def _draw(axes, throughput, scaling, durations) -> None:
    left, right = axes
    for r in throughput.values():
        if r["runs"]:
            left.plot(
                [run["seconds"] for run in r["runs"]],
                [max(run["completed"], 0.5) for run in r["runs"]],
                marker="o",
                label=f"{r['algorithm']} ({r['setting']})",
            )
    paper_x = [d for d in durations]
    left.plot(
        paper_x,
        [PAPER_RATE["td"] * d for d in paper_x],
        ls="--",
        color="tab:gray",
        label="paper TD (264/s)",
    )
    left.set_yscale("log")
    left.set_xlabel("run duration (s)")
    left.set_ylabel("successful allocations")
    left.set_title("throughput, 4 × 100 pipeline (§7.2, Fig. 5)")
    left.legend(fontsize=7)

    for name, pts in scaling.items():
        xs = [s for s, p in sorted(pts.items()) if p.get("cpu_seconds") is not None]
        ys = [1000 * pts[s]["cpu_seconds"] for s in xs]
        if xs:
            right.plot(xs, ys, marker="o", label=name)
    right.axhline(1000, color="tab:red", lw=0.8, ls="--", label="1 s target")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("executors (nodes = executors / 20, ≤ 500)")
    right.set_ylabel("planning time (CPU ms, median)")
    right.set_title("scaling")
    right.legend(fontsize=7)
