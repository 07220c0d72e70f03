"""What ``scheduler-py bench cluster`` prints and draws: the progress line of a run, the
table per topology with ratios to DefaultScheduler and RAS, the PASS/MISS lines of its
targets and the grouped-bar PNG (the runs themselves: :mod:`scheduler_py.bench.cluster`)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from typing import Any

from scheduler_py.bench import report
from scheduler_py.bench.cluster_adaptive import ADAPTIVE, adaptive_target
from scheduler_py.bench.cluster_runs import baseline, cpu_target, network_target, topology_spec
from scheduler_py.bench.report import Table, fmt, ratio

QUICK_TARGET_S = 20 * 60
"""``--quick`` must finish within this (docs/evaluation.md, "The quick run")"""


def median_text(values: Sequence[float]) -> str:
    from scheduler_py.bench.cluster_runs import median

    value = median(values)
    return "–" if value is None else f"{value:.0f}"


def progress(index: int, total: int, run: Mapping[str, Any], began: float) -> None:
    where = (
        f"run {index}/{total} [{(time.monotonic() - began) / 60:.1f} min] {run['topology']} "
        f"{run['scheduler']} loadaware={'on' if run['loadaware'] else 'off'}"
    )
    if run.get("error"):
        report.line(f"  {where}: FAILED {run['error'][:300]}")
        return
    if run.get("brain_decision") not in (None, "PLACE"):
        where += f" [LEFT TO STORM by the brain: {str(run.get('brain_reason'))[:200]}]"
    inter = run.get("inter_host_bytes")
    report.line(
        f"  {where}: {run['throughput']:,.0f} acked/s, p50 {fmt(run['p50_ms'], '.1f')} ms, "
        f"p99 {fmt(run['p99_ms'], '.1f')} ms, {run['hosts']} host(s), {run['workers']} "
        f"worker(s), inter-host {'–' if inter is None else f'{inter / 1e6:,.1f} MB'}, "
        f"max host {fmt(run.get('max_host_cpu_cores'), '.2f')} cores, "
        f"load {run['load_average']:.1f}"
    )


def tables(rows: Sequence[Mapping[str, Any]], settings: Mapping[str, Any], emulated: bool) -> None:
    setting = "emulated hosts" if emulated else "LOOPBACK cluster (no emulated hosts)"
    for topology in settings["topologies"]:
        table = Table(
            [
                "scheduler", "LA", "runs", "acked/s", "range", "×default", "×RAS", "p50 ms",
                "p99 ms", "p99 range", "inter-host MB", "predicted", "hosts", "workers",
                "max host cores",
            ],
            caption=f"{topology} ({rows[0]['kind'] if rows else ''}) on the {setting}",
            notes=[
                "LA: Storm's load-aware messaging (topology.disable.loadaware.messaging false); "
                "×RAS: against the better RAS strategy; predicted: the brain's inter-node "
                "traffic (bytes when planned with measured bytes/s, else model units)",
            ],
        )  # fmt: skip
        for row in (r for r in rows if r["topology"] == topology):
            if row.get("moved_runs"):
                table.notes.append(
                    f"{row['scheduler']} (LA {'on' if row['loadaware'] else 'off'}): "
                    f"{row['moved_runs']} run(s) moved: the placement changed while measured "
                    "(runs[].placement_held false), so they are not in the medians"
                )
            if row["left_to_storm_runs"]:
                table.notes.append(
                    f"{row['scheduler']} (LA {'on' if row['loadaware'] else 'off'}): the brain "
                    f"left {row['left_to_storm_runs']} run(s) to Storm (see runs[].brain_reason)"
                )
            default = baseline(rows, topology, row["loadaware"], ["default"])
            ras = baseline(rows, topology, row["loadaware"], ["ras-default", "ras-generic"])
            spread, p99_spread = row["throughput_range"], row["p99_ms_range"]
            inter = row["inter_host_bytes_median"]
            predicted = row["predicted_inter_host_bytes"]
            if predicted is not None:
                predicted_text = f"{predicted / 1e6:,.1f} MB"
            else:
                predicted_text = fmt(row["predicted_internode_traffic"], ".3g")
            table.add(
                row["scheduler"],
                "on" if row["loadaware"] else "off",
                f"{row['runs']}"
                + (f" ({row['failed_runs']} failed)" if row["failed_runs"] else "")
                + (f" ({row['moved_runs']} moved)" if row.get("moved_runs") else ""),
                fmt(row["throughput_median"], ",.0f"),
                "–" if spread is None else f"{spread[0]:,.0f}–{spread[1]:,.0f}",
                ratio(row["throughput_median"], default and default["throughput_median"]),
                ratio(row["throughput_median"], ras and ras["throughput_median"]),
                fmt(row["p50_ms_median"], ".1f"),
                fmt(row["p99_ms_median"], ".1f"),
                "–" if p99_spread is None else f"{p99_spread[0]:.1f}–{p99_spread[1]:.1f}",
                "–" if inter is None else f"{inter / 1e6:,.1f}",
                predicted_text,
                fmt(row["hosts_median"], "g"),
                fmt(row["workers_median"], "g"),
                fmt(row["max_host_cpu_cores_median"], ".2f"),
            )
        table.print()


MODEL_TOLERANCE = 0.20
"""The link model's target: prediction and measurement of inter-host bytes should agree
within ±20 %."""


def model_check(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The link model checked: the brain's predicted inter-host bytes beside the bytes
    measured on the hosts' links, per brain row; ``within`` is ``None`` where either is missing."""
    report.line()
    report.line("model check: predicted vs measured inter-host bytes")
    checks: list[dict[str, Any]] = []
    for row in rows:
        if not str(row["scheduler"]).startswith("brain:"):
            continue
        measured, predicted = row["inter_host_bytes_median"], row["predicted_inter_host_bytes"]
        label = f"{row['topology']} {row['scheduler']} LA {'on' if row['loadaware'] else 'off'}"
        within: bool | None = None
        if measured is None or predicted is None:
            detail = "not comparable (a side is missing: see runs[].predicted_note)"
        elif predicted <= 0:
            within = measured <= 0
            detail = f"predicted 0, measured {measured / 1e6:,.1f} MB"
        else:
            error = measured / predicted - 1
            within = abs(error) <= MODEL_TOLERANCE
            detail = (
                f"predicted {predicted / 1e6:,.1f} MB, measured {measured / 1e6:,.1f} MB "
                f"({error:+.0%})"
            )
        verdict = {True: "within ±20 %", False: "OFF by more than 20 %", None: "n/a"}[within]
        report.line(f"  {label}: {detail} — {verdict}")
        checks.append({"row": label, "within_20pct": within, "detail": detail})
    return checks


def link_model_check(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Load-aware messaging off: per run, the uniform-shuffle link model's busiest sender and
    its largest error in a host's share of the bytes sent between hosts
    (:mod:`scheduler_py.bench.cluster_links`), for every scheduler's placement."""
    checked = [r for r in runs if isinstance(r.get("link_model"), Mapping)]
    if not checked:
        return []
    report.line()
    report.line(
        "link model (load-aware off): each host's predicted vs measured share of the bytes "
        "sent between hosts"
    )
    lines: list[dict[str, Any]] = []
    for run in checked:
        model = run["link_model"]
        label = f"  run {run['index']} {run['topology']} {run['scheduler']}"
        if "max_share_error" not in model:
            report.line(f"{label}: n/a ({model.get('note', 'no comparison')})")
            lines.append({"index": run["index"], "max_share_error": None})
            continue
        same = model["busiest_sender_predicted"] == model["busiest_sender_measured"]
        report.line(
            f"{label}: busiest link {model['busiest_link']:.2f} (model units), busiest sender "
            f"predicted {model['busiest_sender_predicted']}, measured "
            f"{model['busiest_sender_measured']}{'' if same else ' (differs)'}; largest share "
            f"error {model['max_share_error']:.0%}"
        )
        lines.append(
            {
                "index": run["index"],
                "max_share_error": model["max_share_error"],
                "busiest_sender_agrees": same,
            }
        )
    return lines


THROUGHPUT_TOLERANCE = 0.15
"""The throughput model's target: predicted within ±15 % of measured for every placement."""


def throughput_model_check(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Predicted (``scheduler_py/model/throughput.py``, ``runs[].throughput_model``) against
    measured acked tuples/s for every run of every scheduler, per topology × scheduler and
    over the whole run, with the ±15 % target's verdict."""
    checked = [
        r
        for r in runs
        if isinstance(r.get("throughput_model"), Mapping) and "error" in r["throughput_model"]
    ]
    report.line()
    report.line(
        "throughput model (scheduler_py/model/throughput.py): predicted vs measured acked/s, "
        "every scheduler's placement"
    )
    if not checked:
        report.line("  n/a: no run recorded a placement of a modelled topology on emulated hosts")
        return {"runs": 0, "passed": None}
    groups: dict[tuple[str, str, bool], list[Mapping[str, Any]]] = {}
    for run in checked:
        groups.setdefault((run["topology"], run["scheduler"], run["loadaware"]), []).append(run)
    table = Table(
        ["topology", "scheduler", "LA", "runs", "measured", "predicted", "error", "bottleneck"]
    )
    for (topology, scheduler, loadaware), members in sorted(groups.items()):
        errors = [m["throughput_model"]["error"] for m in members]
        table.add(
            topology,
            scheduler,
            "on" if loadaware else "off",
            len(members),
            fmt(statistics.median(m["throughput"] for m in members), ",.0f"),
            fmt(
                statistics.median(m["throughput_model"]["predicted_throughput"] for m in members),
                ",.0f",
            ),
            f"{statistics.median(errors):+.0%} ({min(errors):+.0%} … {max(errors):+.0%})",
            members[0]["throughput_model"]["bottleneck"],
        )
    table.print()
    errors = [abs(r["throughput_model"]["error"]) for r in checked]
    passed = max(errors) <= THROUGHPUT_TOLERANCE
    detail = (
        f"{len(errors)} runs: median |error| {statistics.median(errors):.1%}, largest "
        f"{max(errors):.1%}, {sum(e <= THROUGHPUT_TOLERANCE for e in errors)} within ±15 %"
    )
    report.target_line("throughput model within ±15 % for every placement", passed, detail)
    return {
        "runs": len(errors),
        "median_abs_error": statistics.median(errors),
        "max_abs_error": max(errors),
        "within_15pct": sum(e <= THROUGHPUT_TOLERANCE for e in errors),
        "passed": passed,
    }


def default_orders(checks: Sequence[Mapping[str, Any]]) -> None:
    """Print :func:`scheduler_py.bench.default_orders.session_check`: DefaultScheduler's
    busiest link and predicted throughput over every supervisor-id order, and the measured
    instances beside it."""
    if not checks:
        return
    report.line()
    report.line(
        "DefaultScheduler over every supervisor-id order (EvenScheduler's round-robin; "
        "scheduler_py/bench/default_orders.py):"
    )
    for check in checks:
        label = f"  {check['topology']} LA {'on' if check['loadaware'] else 'off'}"
        if not check.get("predicted"):
            report.line(f"{label}: n/a ({check.get('note') or 'no busiest link measured'})")
            continue
        low, high = check["constant_range"]
        shares = ", ".join(
            f"{link:g} in {share:.0%} → {fmt(value)}/s" for link, share, value in check["predicted"]
        )
        line = (
            f"{label}: {check['orders']} orders; busiest link {shares} (acked/s × busiest link "
            f"{fmt(check['constant'])}, {fmt(low)}–{fmt(high)} over the session's runs); "
            f"median over the orders {fmt(check['predicted_median'])}/s"
        )
        if check.get("best_brain"):
            line += (
                f"; best brain {check['best_brain']} {fmt(check['best_brain_throughput'])}/s = "
                f"{ratio(check['best_brain_throughput'], check['predicted_median'])} that median"
            )
        report.line(line)
        for run in check["measured"]:
            order = " ".join(run["supervisor_order"] or ["?"])
            modelled = {True: "as modelled", False: "NOT as modelled", None: "not compared"}
            report.line(
                f"    run {run['index']} (cluster {run['cluster_instance']}): order {order}, "
                f"placement {modelled[run['as_modelled']]}, busiest link "
                f"{fmt(run['busiest_link'])}, {fmt(run['throughput'])} acked/s"
            )


def checks_and_targets(
    rows: Sequence[Mapping[str, Any]],
    runs: Sequence[Mapping[str, Any]],
    settings: Mapping[str, Any],
    emulated: bool,
    quick: bool,
    elapsed: float,
    order_checks: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Print what ``bench cluster`` prints after its tables — the throughput model's check,
    the link models' checks, DefaultScheduler over the supervisor-id orders and the targets —
    and return them as the fields of its JSON (``bench cluster_sessions`` prints the same for
    pooled sessions)."""
    checked = {
        "throughput_model_check": throughput_model_check(runs),
        "model_check": model_check(rows),
        "link_model_check": link_model_check(runs),
        "default_orders": list(order_checks),
    }
    default_orders(order_checks)
    checked["targets"] = targets(rows, runs, settings, emulated, quick, elapsed, order_checks)
    return checked


def targets(
    rows: Sequence[Mapping[str, Any]],
    runs: Sequence[Mapping[str, Any]],
    settings: Mapping[str, Any],
    emulated: bool,
    quick: bool,
    elapsed: float,
    order_checks: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Print the cluster benchmark's targets; the network/CPU ones count only on emulated hosts
    (on the loopback cluster the numbers are printed with verdict n/a)."""
    report.line()
    report.line("targets:")
    results: list[dict[str, Any]] = []
    over_orders = {(c["topology"], c["loadaware"]): c.get("predicted_median") for c in order_checks}
    for topology in settings["topologies"]:
        spec = topology_spec(topology)
        for loadaware in settings["loadaware"]:
            if spec.kind == "network":
                passed, detail = network_target(
                    rows, topology, loadaware, over_orders.get((topology, loadaware))
                )
            else:
                passed, detail = cpu_target(rows, topology, loadaware)
            label = (
                f"{topology} LA {'on' if loadaware else 'off'}: best brain >= 1.30× default, "
                ">= 1.10× RAS, p99 no worse"
                if spec.kind == "network"
                else f"{topology} LA {'on' if loadaware else 'off'}: best brain <= RAS hosts "
                "at >= RAS throughput"
            )
            if not emulated:
                detail += " (loopback cluster, not the target's 6 emulated hosts: no verdict)"
                passed = None
            report.target_line(label, passed, detail)
            results.append({"target": label, "passed": passed, "detail": detail})
    for topology in settings["topologies"]:
        for loadaware in settings["loadaware"]:
            if not any(r["scheduler"] == ADAPTIVE and r["topology"] == topology for r in rows):
                continue
            label = (
                f"{topology} LA {'on' if loadaware else 'off'}: adaptive path >= 90 % of the "
                "best static placement within 5 min"
            )
            passed, detail = adaptive_target(rows, runs, topology, loadaware)
            if not emulated:
                detail += " (loopback cluster: no verdict)"
                passed = None
            report.target_line(label, passed, detail)
            results.append({"target": label, "passed": passed, "detail": detail})
    report.target_line(
        "worker monitor overhead < 5 %", None, "measured by `scheduler-py bench monitor_overhead`"
    )
    quick_passed = (elapsed <= QUICK_TARGET_S) if quick else None
    report.target_line(
        "bench cluster --quick < 20 min",
        quick_passed,
        f"{elapsed / 60:.1f} min" + ("" if quick else " (not a --quick run)"),
    )
    results.append({"target": "quick < 20 min", "passed": quick_passed, "minutes": elapsed / 60})
    return results


def draw(axes: Any, rows: Sequence[Mapping[str, Any]], topologies: Sequence[str]) -> None:
    """One panel per topology: throughput medians per scheduler, one bar per load-aware
    setting, min–max whiskers."""
    panels = axes if isinstance(axes, list) else [axes]
    for panel, topology in zip(panels, topologies, strict=False):
        mine = [r for r in rows if r["topology"] == topology]
        schedulers = list(dict.fromkeys(r["scheduler"] for r in mine))
        settings = list(dict.fromkeys(r["loadaware"] for r in mine))
        width = 0.8 / max(1, len(settings))
        for j, setting in enumerate(settings):
            xs, heights, low, high = [], [], [], []
            for i, scheduler in enumerate(schedulers):
                row = next(
                    (r for r in mine if r["scheduler"] == scheduler and r["loadaware"] == setting),
                    None,
                )
                if row is None or row["throughput_median"] is None:
                    continue
                xs.append(i + (j - (len(settings) - 1) / 2) * width)
                heights.append(row["throughput_median"])
                spread = row["throughput_range"]
                low.append(row["throughput_median"] - spread[0])
                high.append(spread[1] - row["throughput_median"])
            panel.bar(
                xs,
                heights,
                width=width,
                yerr=[low, high],
                capsize=3,
                label=f"load-aware {'on' if setting else 'off'}",
            )
        panel.set_xticks(range(len(schedulers)))
        panel.set_xticklabels(schedulers, rotation=30, ha="right")
        panel.set_ylabel("acked tuples/s (median, min–max)")
        panel.set_title(topology)
        panel.legend(loc="lower right", fontsize="small")
