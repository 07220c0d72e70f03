"""The throughput model (``scheduler_py/model/throughput.py``) against every recorded
``bench cluster`` run with a placement: predicted vs measured acked tuples/s, and the model's
constants fitted to them.

Every run of a ``bench cluster`` result under ``docs/results/emulated-network/`` (and
``bench-results/``) — any ``*.json`` whose ``benchmark`` is ``cluster``, whatever its file is
called — that recorded where Nimbus put its executors (``runs[].placement``) and kept them
there while it was measured (:func:`held_while_measured`) is one sample: the JVM
topology as :func:`scheduler_py.bench.cluster_links.model_topology` describes it, on the
emulated hosts of its file (CPU quota, rack, ``host_mbit``, ``interrack_mbit``), its payload
and per-tuple CPU from its conf (``bench.payload.bytes``, ``bench.cpu.micros``), load-aware
messaging as it ran. :func:`errors` predicts each; :func:`fit` searches the constants that
minimise the root-mean-square log error (Nelder-Mead on the logarithms, from the shipped
:data:`~scheduler_py.model.throughput.DEFAULT_CONSTANTS`). ``scheduler-py bench
cluster_calibration`` prints the error per topology × scheduler with the shipped constants and
with the fitted ones, and writes ``cluster_calibration.json``."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path
from typing import Any

from scheduler_py.bench.cluster_links import model_topology
from scheduler_py.bench.registry import BenchOptions
from scheduler_py.bench.report import Table, write_json
from scheduler_py.model.throughput import (
    DEFAULT_CONSTANTS,
    Constants,
    ThroughputInputs,
    throughput,
)
from scheduler_py.model.types import MBIT, Node, Placement, Problem

PAPER = "the throughput model calibrated on the emulated-network runs"

SOURCES = ("docs/results/emulated-network", "bench-results")
"""Where ``bench cluster`` results are looked for (recursively)."""

BENCHMARK = "cluster"
"""the ``benchmark`` of a ``bench cluster`` result (``scheduler_py/bench/cluster.py``)"""

FITTED = ("remote_cpu", "ack_cpu", "framing_bytes", "ack_bytes", "worker_cpu")
"""The constants :func:`fit` moves. The link efficiency stays (it and the framing are one
degree of freedom on these runs), and so does the CPU per tuple handled in a worker: every
recorded run sends most tuples between workers, so the fit drives it to zero, which would
make a plan that keeps everything in one worker infinitely fast."""


LEVELLED_OFF_S = 150.0
"""From when a run counts as measured at its levelled-off rate: the CPU-bound topologies with
C2 workers on the emulated hosts ran at 0.75–0.83× their later rate 30–95 s after their
first acks and levelled off from about 150 s
(``docs/results/emulated-network/throughput-default/README.md``, sixth set)."""

JVM_SPOUT_PENDING = 1000
"""``topology.max.spout.pending`` of the JVM topologies when a run's conf does not set it
(``topologies/README.md``, "JVM topologies")."""


@dataclass(frozen=True)
class Sample:
    """One recorded run as the model sees it."""

    source: str
    topology: str
    scheduler: str
    loadaware: bool
    measured: float
    problem: Problem
    placement: Placement
    inputs: ThroughputInputs
    kind: str = "network"
    """``network`` or ``cpu`` (``bench cluster``'s topology kinds)"""
    measured_from_s: float | None = None
    """How long after the first acks its measured interval began (:func:`_measured_from`)."""

    @property
    def levelled_off(self) -> bool:
        """Measured late enough for its rate to have levelled off (:data:`LEVELLED_OFF_S`)."""
        return self.measured_from_s is not None and self.measured_from_s >= LEVELLED_OFF_S


def cluster_result(path: Path) -> Mapping[str, Any] | None:
    """The ``bench cluster`` result in ``path``; ``None`` for any other file, readable or not."""
    try:
        document = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(document, Mapping) or document.get("benchmark") != BENCHMARK:
        return None
    return document


def samples_of(path: Path) -> list[Sample]:
    """The runs of one ``bench cluster`` result that recorded a placement on emulated hosts;
    none for another JSON file."""
    document = cluster_result(path)
    if document is None:
        return []
    settings = document.get("settings")
    warmup = settings.get("warmup") if isinstance(settings, Mapping) else None
    found = (
        sample_of(
            run,
            document.get("emulated_hosts"),
            str(path.parent),
            warmup if isinstance(warmup, (int, float)) else None,
        )
        for run in document.get("runs", [])
    )
    return [sample for sample in found if sample is not None]


def sample_of(
    run: Mapping[str, Any], hosts: Any, source: str = "", warmup_s: float | None = None
) -> Sample | None:
    """One run as the model sees it, on the emulated hosts ``hosts`` (the ``emulated_hosts``
    of its ``cluster.json``); ``None`` when it recorded no placement of a modelled topology.
    ``warmup_s``: its file's fixed warm-up, for a run that did not record when its interval
    began."""
    if not isinstance(hosts, Mapping) or not hosts.get("hosts"):
        return None
    host_of = {h["address"]: h["name"] for h in hosts["hosts"]}
    nodes = tuple(
        Node(h["name"], float(h.get("cpu_cores", 1.0)) * 100.0, slots=4, rack=h["rack"])
        for h in hosts["hosts"]
    )
    host_bytes = float(hosts.get("host_mbit", 100.0)) * MBIT
    rack_bytes = float(hosts.get("interrack_mbit", 0.0)) * MBIT or None
    placement = run.get("placement")
    topology = model_topology(str(run.get("topology", "")))
    if not placement or topology is None or not run.get("throughput"):
        return None
    if not held_while_measured(run):
        return None  # measured partly on another placement than the one kept
    node_of: dict[str, str] = {}
    worker_of: dict[str, int] = {}
    for component in topology.components:
        for index, slot in enumerate(placement.get(component.id) or []):
            address, _, port = slot.rpartition(":")
            if address in host_of:
                node_of[f"{component.id}#{index}"] = host_of[address]
                worker_of[f"{component.id}#{index}"] = int(port)
    if len(node_of) != len(topology.executors):
        return None
    conf = run.get("conf") or {}
    micros = float(conf.get("bench.cpu.micros", 0) or 0)
    work = {c.id: micros * 1e-6 for c in topology.components if not c.is_system}
    pending = conf.get("topology.max.spout.pending", JVM_SPOUT_PENDING)
    spouts = sum(c.parallelism for c in topology.components if c.is_spout)
    inputs = ThroughputInputs(
        loadaware=bool(run.get("loadaware", True)),
        payload_bytes=float(conf.get("bench.payload.bytes", 8192)),
        work_seconds=work,
        host_bandwidth=host_bytes,
        rack_bandwidth=rack_bytes,
        in_flight=float(pending) * spouts if pending else None,
        receive_buffer=int(conf.get("topology.executor.receive.buffer.size", 32768)),
    )
    return Sample(
        source,
        str(run["topology"]),
        str(run["scheduler"]),
        inputs.loadaware,
        float(run["throughput"]),
        Problem(nodes, topology),
        Placement(topology.id, node_of, worker_of=worker_of),
        inputs,
        kind="cpu" if micros > 0 else "network",
        measured_from_s=_measured_from(run, warmup_s),
    )


def held_while_measured(run: Mapping[str, Any]) -> bool:
    """Whether a run was measured wholly on its recorded placement: the placement read at the
    start of its measured interval was the one read at its end (``runs[].placement_held``),
    so a brain run re-placed before its interval is a sample too. A run recorded before
    that field existed counts only if nothing but declined re-plans happened in it."""
    held = run.get("placement_held")
    if isinstance(held, bool):
        return held
    return all(e.get("state") == "declined" for e in run.get("reconfigurations") or [])


def _measured_from(run: Mapping[str, Any], warmup_s: float | None) -> float | None:
    """``runs[].measured_from_s``; before it was recorded, the fixed warm-up, counted from the
    end of the reconfiguration in a run that waited for one (``reconfigured_s``)."""
    recorded = run.get("measured_from_s")
    if isinstance(recorded, (int, float)):
        return float(recorded)
    if warmup_s is None:
        return None
    waited = run.get("reconfigured_s")
    return warmup_s + (float(waited) if isinstance(waited, (int, float)) else 0.0)


def predicted_run(run: Mapping[str, Any], hosts: Any) -> dict[str, Any]:
    """The model's throughput for a run's recorded placement beside the measured one
    (``bench cluster`` stores it as ``runs[].throughput_model``)."""
    if not held_while_measured(run):
        return {"note": "re-placed during its measured interval: no one placement to predict"}
    sample = sample_of(run, hosts)
    if sample is None:
        return {"note": "no placement of a modelled topology on emulated hosts"}
    predicted = throughput(sample.problem, sample.placement, sample.inputs)
    return {
        "predicted_throughput": predicted.rate,
        "bottleneck": predicted.bottleneck,
        "error": predicted.rate / sample.measured - 1.0,
    }


def all_samples(roots: Iterable[str] = SOURCES) -> list[Sample]:
    found: list[Sample] = []
    for root in roots:
        for path in sorted(Path(root).rglob("*.json")):
            found.extend(samples_of(path))
    return found


def errors(samples: Sequence[Sample], constants: Constants) -> list[tuple[Sample, float, str]]:
    """Per sample: predicted / measured − 1 and the predicted bottleneck."""
    result = []
    for sample in samples:
        predicted = throughput(
            sample.problem, sample.placement, replace(sample.inputs, constants=constants)
        )
        result.append((sample, predicted.rate / sample.measured - 1.0, predicted.bottleneck))
    return result


def rms_log_error(samples: Sequence[Sample], constants: Constants) -> float:
    values = [math.log1p(e) for _, e, _ in errors(samples, constants)]
    return math.sqrt(sum(v * v for v in values) / len(values)) if values else 0.0


def fit(samples: Sequence[Sample], start: Constants = DEFAULT_CONSTANTS) -> Constants:
    """The constants :data:`FITTED` that minimise :func:`rms_log_error` (Nelder-Mead on
    their logarithms, the rest as in ``start``)."""
    from scipy.optimize import minimize

    names = [f.name for f in fields(Constants)]
    base = dict(zip(names, astuple(start), strict=True))

    def constants_of(x: Sequence[float]) -> Constants:
        return Constants(**(base | {n: math.exp(v) for n, v in zip(FITTED, x, strict=True)}))

    x0 = [math.log(max(base[n], 1e-9)) for n in FITTED]
    best = minimize(
        lambda x: rms_log_error(samples, constants_of(x)),
        x0,
        method="Nelder-Mead",
        options={"maxfev": 600, "xatol": 1e-3, "fatol": 1e-5},
    )
    return constants_of(best.x)


def _rows(found: Sequence[tuple[Sample, float, str]]) -> list[list[Any]]:
    groups: dict[tuple[str, str, bool], list[tuple[float, str]]] = {}
    for sample, error, bottleneck in found:
        key = (sample.topology, sample.scheduler, sample.loadaware)
        groups.setdefault(key, []).append((error, bottleneck))
    rows = []
    for (topology, scheduler, loadaware), values in sorted(groups.items()):
        errs = [e for e, _ in values]
        rows.append(
            [
                topology,
                scheduler,
                "on" if loadaware else "off",
                len(errs),
                f"{statistics.median(errs):+.0%}",
                f"{min(errs):+.0%} … {max(errs):+.0%}",
                values[0][1],
            ]
        )
    return rows


def summary(found: Sequence[tuple[Sample, float, str]]) -> dict[str, float]:
    errs = [abs(e) for _, e, _ in found]
    if not errs:
        return {}
    return {
        "runs": len(errs),
        "median_abs_error": statistics.median(errs),
        "max_abs_error": max(errs),
        "within_15pct": sum(1 for e in errs if e <= 0.15) / len(errs),
    }


def by_when_measured(found: Sequence[tuple[Sample, float, str]]) -> list[dict[str, Any]]:
    """The error per topology kind, of the runs measured before their rate levelled off
    (:data:`LEVELLED_OFF_S`) and of those measured after."""
    rows = []
    for kind in ("network", "cpu"):
        for levelled in (False, True):
            chosen = [f for f in found if f[0].kind == kind and f[0].levelled_off == levelled]
            if chosen:
                rows.append({"kind": kind, "levelled_off": levelled, **summary(chosen)})
    return rows


def print_table(caption: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    table = Table(header, caption)
    for row in rows:
        table.add(*row)
    table.print()


def run(options: BenchOptions) -> None:
    roots = options.extra.get("sources", ",".join(SOURCES)).split(",")
    samples = all_samples(roots)
    if not samples:
        print(f"no run with a recorded placement under {', '.join(roots)}")
        return
    shipped = errors(samples, DEFAULT_CONSTANTS)
    header = ["topology", "scheduler", "LA", "runs", "error median", "range", "bottleneck"]
    print_table(
        "Throughput model, shipped constants: predicted / measured − 1", header, _rows(shipped)
    )
    print("shipped constants:", summary(shipped))
    when = by_when_measured(shipped)
    print_table(
        f"Shipped constants, by when the run was measured (levelled off: ≥ {LEVELLED_OFF_S:g} s "
        "after the first acks)",
        ["kind", "measured", "runs", "median |error|", "largest", "within ±15 %"],
        [
            [
                r["kind"],
                "levelled off" if r["levelled_off"] else "earlier",
                r["runs"],
                f"{r['median_abs_error']:.1%}",
                f"{r['max_abs_error']:.0%}",
                f"{r['within_15pct']:.1%}",
            ]
            for r in when
        ],
    )
    result: dict[str, Any] = {
        "shipped": {
            "constants": DEFAULT_CONSTANTS.__dict__,
            "error": summary(shipped),
            "by_when_measured": when,
        },
    }
    if options.extra.get("fit", "yes") != "no":
        fitted = fit(samples)
        found = errors(samples, fitted)
        print_table("Fitted constants", header, _rows(found))
        print("fitted constants:", fitted)
        print("fitted error:", summary(found))
        result["fitted"] = {"constants": fitted.__dict__, "error": summary(found)}
    write_json(options.output_dir / "cluster_calibration.json", result)
