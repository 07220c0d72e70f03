"""One Nimbus scheduling round through the real shim (BrainScheduler -> Thrift -> brain)
vs Storm's ResourceAwareScheduler on 500 supervisors, 1,000 and 10,000 executors in 1 and 50
topologies: p50/p99 and the stages.

The round trip through the real shim (docs/evaluation.md, "The Nimbus round trip"): how long
Nimbus waits for a scheduling round with ``BrainScheduler`` against the real Python brain,
beside Storm's own ``ResourceAwareScheduler`` on the same input.

The bench builds the shim and its test classes (Maven), starts ``scheduler-py serve`` on a free
127.0.0.1 port, and runs the plain timed loop
``storm_plugin/src/test/java/io/schedulerpy/storm/RoundTripBench.java`` (not part of ``mvn
test``): a synthetic ``Cluster`` of 500 supervisors (4 slots, 400 % CPU, 16 GB each) and word-count
topologies built as Nimbus builds them, for every size ``EXECUTORSxTOPOLOGIES``. Per round, on
fresh copies of the same cluster, interleaved: ``BrainScheduler.schedule`` (snapshot → Thrift →
plan → validate → assign), the snapshot and the Thrift call (planning included) timed on their
own, and ``ResourceAwareScheduler.schedule``. Validation and assignment are the round minus those
two (medians). Rounds where the brain left a topology to Storm's fallback are counted and shown.

Targets: the brain's round p99 < 50 ms at 1,000 executors and < 500 ms at 10,000, and
faster than RAS on the same input (p50); for the shipped default (``throughput``,
``docs/algorithms/throughput-model.md``): p99 ≤ 100 ms at 1,000 executors × 50 topologies,
and within the shim's timeout (``scheduler.brain.timeout.ms``, 2,000 ms) at 10,000 × 50.

Options (``--set``): ``sizes`` (default 1000x1,1000x50,10000x1,10000x50), ``rounds`` (measured
rounds per size after 2 warm-up rounds; default 30, quick 5), ``port`` (default: a free one),
``build`` (0 to skip Maven), ``algorithm`` (the brain's ``serve --algorithm``; default the
service's default, ``DEFAULT_ALGORITHM`` of ``scheduler_py/config/keys.py``).
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scheduler_py.bench import report
from scheduler_py.bench.checkout import REPO, checkout_path
from scheduler_py.bench.registry import BenchOptions
from scheduler_py.bench.report import Table, fmt
from scheduler_py.config import keys

NAME = "roundtrip"
PAPER = "the Nimbus round trip through the shim vs Storm's RAS"
SIZES = ("1000x1", "1000x50", "10000x1", "10000x50")
ROUNDS, QUICK_ROUNDS = 30, 5
TARGET_P99_MS = {1000: 50.0, 10000: 500.0}
DEFAULT_TARGET_P99_MS = {(1000, 50): 100.0, (10000, 50): float(keys.BRAIN_TIMEOUT_MS.default)}
"""(executors, topologies) -> the shipped default's round p99 target, at most (the timeout:
the shim's default ``scheduler.brain.timeout.ms``)"""
PLUGIN = REPO / "storm_plugin"
CLASSPATH_FILE = "target/test-classpath.txt"
MAIN_CLASS = "io.schedulerpy.storm.RoundTripBench"
BRAIN_START_SECS = 60.0


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarise(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per size × scheduler (``brain``, ``ras``): the fields of
    ``bench-results/roundtrip.json``, exactly."""
    rows = []
    sizes = list(dict.fromkeys((r["executors"], r["topologies"]) for r in records))
    for executors, topologies in sizes:
        mine = [r for r in records if (r["executors"], r["topologies"]) == (executors, topologies)]
        for scheduler, key in (("brain", "brain_ms"), ("ras", "ras_ms")):
            times = [r[key] for r in mine]
            rows.append(
                {
                    "executors": executors,
                    "topologies": topologies,
                    "scheduler": scheduler,
                    "p50_ms": percentile(times, 50),
                    "p99_ms": percentile(times, 99),
                }
            )
    return rows


def _incomplete(records: list[dict[str, Any]], executors: int, topologies: int) -> tuple[int, int]:
    """(rounds whose first topology fell back to Storm, rounds where RAS left executors out)."""
    mine = [r for r in records if (r["executors"], r["topologies"]) == (executors, topologies)]
    fell_back = sum(1 for r in mine if "Fallback" in r.get("status", ""))
    ras_short = sum(1 for r in mine if r.get("ras_assigned", 0) < r.get("total_executors", 0))
    return fell_back, ras_short


def targets(
    summary: list[dict[str, Any]], records: list[dict[str, Any]]
) -> list[tuple[str, bool | None, str]]:
    """(label, passed, detail) for each size: the p99 target and brain faster than RAS. A round
    the brain left to Storm's fallback does not count as the brain's; a speed comparison with a
    RAS that left executors unassigned is not judged."""
    result = []
    by_key = {(r["executors"], r["topologies"], r["scheduler"]): r for r in summary}
    for (executors, topologies, scheduler), row in by_key.items():
        if scheduler != "brain":
            continue
        fell_back, ras_short = _incomplete(records, executors, topologies)
        ras = by_key.get((executors, topologies, "ras"))
        limit = TARGET_P99_MS.get(executors)
        where = f"{executors:,} executors, {topologies} topology(ies)"
        note = f"; the brain fell back to Storm in {fell_back} round(s)" if fell_back else ""
        if limit is not None:
            result.append(
                (
                    f"brain round p99 < {limit:g} ms at {where}",
                    row["p99_ms"] < limit and not fell_back,
                    f"p99 {row['p99_ms']:.1f} ms (p50 {row['p50_ms']:.1f}){note}",
                )
            )
        default_limit = DEFAULT_TARGET_P99_MS.get((executors, topologies))
        if default_limit is not None:
            result.append(
                (
                    f"default round p99 <= {default_limit:g} ms at {where}",
                    row["p99_ms"] <= default_limit and not fell_back,
                    f"p99 {row['p99_ms']:.1f} ms (p50 {row['p50_ms']:.1f}){note}",
                )
            )
        if ras is not None:
            detail = f"p50 {row['p50_ms']:.1f} ms vs {ras['p50_ms']:.1f} ms{note}"
            if ras_short:
                verdict = None
                detail += f"; RAS left executors unassigned in {ras_short} round(s): not judged"
            else:
                verdict = row["p50_ms"] < ras["p50_ms"] and not fell_back
            result.append((f"brain faster than RAS at {where}", verdict, detail))
    return result


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_listening(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + BRAIN_START_SECS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"scheduler-py serve exited with {process.returncode} before listening on "
                f"127.0.0.1:{port}; its log: {log.read_text()[-2000:]}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(
        f"scheduler-py serve did not listen on 127.0.0.1:{port} within {BRAIN_START_SECS:g} s"
    )


def build_plugin() -> None:
    """Compile the shim and its test classes and write their classpath (Maven)."""
    command = [
        "mvn",
        "-q",
        "-B",
        "-f",
        str(checkout_path("storm_plugin/pom.xml")),
        "test-compile",
        "dependency:build-classpath",
        f"-Dmdep.outputFile={CLASSPATH_FILE}",
        "-Dmdep.includeScope=test",
    ]
    subprocess.run(command, check=True)


def run_harness(
    port: int, rounds: int, sizes: list[str], key_file: Path | None = None
) -> list[dict[str, Any]]:
    """Run the Java loop against the brain on ``port``, sealing its rounds with the shim key in
    ``key_file`` (``scheduler_py/service/shim_auth.py``); its records, one per measured round."""
    dependencies = checkout_path(f"storm_plugin/{CLASSPATH_FILE}").read_text().strip()
    classpath = os.pathsep.join(
        [str(PLUGIN / "target/classes"), str(PLUGIN / "target/test-classes"), dependencies]
    )
    with tempfile.TemporaryDirectory(prefix="roundtrip-") as scratch:
        output = Path(scratch) / "rounds.jsonl"
        command = ["java", "-cp", classpath, MAIN_CLASS, str(port), str(rounds), str(output)]
        env = {**os.environ, **({"SCHEDULER_PY_SHIM_KEY_FILE": str(key_file)} if key_file else {})}
        subprocess.run([*command, *sizes], check=True, stdout=subprocess.DEVNULL, env=env)
        return [json.loads(line) for line in output.read_text().splitlines() if line.strip()]


def run(options: BenchOptions) -> None:
    extra = options.extra
    sizes = [s.strip() for s in extra.get("sizes", ",".join(SIZES)).split(",") if s.strip()]
    rounds = int(extra.get("rounds", QUICK_ROUNDS if options.quick else ROUNDS))
    port = int(extra["port"]) if extra.get("port") else free_port()
    algorithm = extra.get("algorithm", keys.DEFAULT_ALGORITHM)
    report.title("A Nimbus scheduling round: the brain through the shim vs RAS", PAPER)
    if extra.get("build", "1") != "0":
        build_plugin()
    load_before = report.machine()["load_average"]
    with tempfile.TemporaryDirectory(prefix="roundtrip-brain-") as scratch:
        log = Path(scratch) / "brain.log"
        command = [sys.executable, "-m", "scheduler_py.cli", "serve", "--port", str(port)]
        key_file = Path(scratch) / "shim.key"
        command += ["--algorithm", algorithm, "--shim-key-file", str(key_file)]
        brain = subprocess.Popen([*command, "--log-file", str(log)])
        try:
            _wait_listening(port, brain, log)
            records = run_harness(port, rounds, sizes, key_file)
        finally:
            brain.terminate()
            brain.wait(timeout=30)
    load_after = report.machine()["load_average"]

    summary = summarise(records)
    table = Table(
        ["size", "scheduler", "p50 ms", "p99 ms", "snapshot ms", "call ms", "validate+assign ms"],
        caption=f"{rounds} measured rounds per size after 2 warm-up rounds, interleaved; "
        f"500 supervisors; brain on 127.0.0.1:{port}, algorithm {algorithm}",
    )
    stages: dict[str, dict[str, float]] = {}
    for row in summary:
        size = f"{row['executors']}x{row['topologies']}"
        key = (row["executors"], row["topologies"])
        mine = [r for r in records if (r["executors"], r["topologies"]) == key]
        if row["scheduler"] == "brain":
            snapshot = statistics.median(r["snapshot_ms"] for r in mine)
            call = statistics.median(r["call_ms"] for r in mine)
            rest = statistics.median(r["brain_ms"] - r["snapshot_ms"] - r["call_ms"] for r in mine)
            fallbacks = sum(1 for r in mine if "Fallback" in r["status"])
            timeouts = sum(1 for r in mine if r.get("call_error"))
            stages[size] = {
                "calls_failed": timeouts,
                "snapshot_ms": snapshot,
                "call_ms": call,
                "validate_assign_ms": rest,
                "rounds_with_fallback_status": fallbacks,
            }
            table.add(
                size,
                "brain",
                fmt(row["p50_ms"], ".1f"),
                fmt(row["p99_ms"], ".1f"),
                fmt(snapshot, ".1f"),
                fmt(call, ".1f"),
                fmt(rest, ".1f"),
            )
        else:
            stages.setdefault(size, {})["ras_rounds_incomplete"] = sum(
                1 for r in mine if r["ras_assigned"] < r["total_executors"]
            )
            table.add(
                size, "ras", fmt(row["p50_ms"], ".1f"), fmt(row["p99_ms"], ".1f"), None, None, None
            )
    table.notes = (
        [
            "call = the Thrift round trip including the brain's planning; validate+assign = the "
            "whole round minus snapshot and call (medians of the per-round differences)",
            f"p99 of {rounds} rounds is close to their maximum; load average before {load_before}, "
            f"after {load_after}",
        ]
        + [
            f"{size}: the first topology's status said Fallback in "
            f"{s['rounds_with_fallback_status']} of {rounds} rounds"
            for size, s in stages.items()
            if s["rounds_with_fallback_status"]
        ]
        + [
            f"{size}: the separately timed Thrift call failed in {s['calls_failed']} of {rounds} "
            "rounds (its time is then the shim's timeout)"
            for size, s in stages.items()
            if s["calls_failed"]
        ]
        + [
            f"{size}: RAS left executors unassigned in {s['ras_rounds_incomplete']} of {rounds} "
            "rounds (its time is that of a failed round)"
            for size, s in stages.items()
            if s.get("ras_rounds_incomplete")
        ]
    )
    table.print()
    report.line()
    report.line("targets:")
    verdicts = targets(summary, records)
    for label, passed, detail in verdicts:
        report.target_line(label, passed, detail)

    report.publish(
        options,
        NAME,
        PAPER,
        lambda axis: _draw(axis, summary),
        {
            "rounds": rounds,
            "algorithm": algorithm,
            "load_average_before": load_before,
            "load_average_after": load_after,
            "stages": stages,
            "records": records,
            "summary": summary,
            "targets": [{"target": t, "passed": p, "detail": d} for t, p, d in verdicts],
        },
    )


def _draw(axis, summary: list[dict[str, Any]]) -> None:
    sizes = list(dict.fromkeys(f"{r['executors']}x{r['topologies']}" for r in summary))
    for k, scheduler in enumerate(("brain", "ras")):
        rows = [r for r in summary if r["scheduler"] == scheduler]
        xs = [i + (k - 0.5) * 0.4 for i in range(len(rows))]
        axis.bar(xs, [r["p50_ms"] for r in rows], width=0.4, label=f"{scheduler} p50")
        axis.scatter(xs, [r["p99_ms"] for r in rows], marker="_", s=200, color="black")
    axis.set_xticks(range(len(sizes)), sizes)
    axis.set_yscale("log")
    axis.set_ylabel("ms per scheduling round (p50 bar, p99 tick)")
    axis.set_xlabel("executors x topologies, 500 supervisors")
    axis.legend(fontsize=7)
