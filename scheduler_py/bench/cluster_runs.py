"""The pure parts of ``scheduler-py bench cluster`` (:mod:`scheduler_py.bench.cluster`):
which Nimbus scheduler and topology conf a scheduler name means, the JVM topologies and
their network-/CPU-bound settings, the interleaved run order, what the brain's plan log
predicted, and the per-(topology, scheduler, load-aware) summary rows whose
field names are fixed (:data:`SUMMARY_FIELDS`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BRAIN_SCHEDULER = "io.schedulerpy.storm.BrainScheduler"
DEFAULT_SCHEDULER = "org.apache.storm.scheduler.DefaultScheduler"
RAS_SCHEDULER = "org.apache.storm.scheduler.resource.ResourceAwareScheduler"
RAS_STRATEGIES = "org.apache.storm.scheduler.resource.strategies.scheduling."
BRAIN_ALGORITHMS = ("rstorm", "t3", "online", "metis", "td", "tdls", "locality", "links")
QUICK_SCHEDULERS = ("default", "ras-default", "brain:locality")
ALL_SCHEDULERS = (
    "default",
    "ras-default",
    "ras-generic",
    *(f"brain:{a}" for a in BRAIN_ALGORITHMS),
    "brain:adaptive",
)
CLASS_ORDER = ("default", "ras", "brain")

SUMMARY_FIELDS = (
    "topology",
    "kind",
    "scheduler",
    "loadaware",
    "runs",
    "throughput_median",
    "p99_ms_median",
    "inter_host_bytes_median",
    "predicted_inter_host_bytes",
    "hosts_median",
)
"""The fields of ``bench-results/cluster.json``'s ``summary`` rows."""


# --------------------------------------------------------------------------- schedulers


@dataclass(frozen=True)
class SchedulerSpec:
    """A scheduler of the comparison: the cluster class it needs (one Nimbus
    ``storm.scheduler``), and the topology conf that selects it within that class."""

    name: str
    cluster_class: str
    storm_scheduler: str
    topology_conf: Mapping[str, object] = field(default_factory=dict)
    adaptive: bool = False
    """``brain:adaptive``: its conf comes from :mod:`scheduler_py.bench.cluster_adaptive`"""
    monitored: bool = False
    """``brain:monitored``: the shipped default with the worker monitor, the aggregation and
    the reconfiguration as ``docs/install.md`` installs them
    (:data:`MONITORED`)"""

    @property
    def follows_replans(self) -> bool:
        """The run waits for the adaptive path's re-plan before it measures."""
        return self.adaptive or self.monitored

    @property
    def brain(self) -> bool:
        return self.cluster_class == "brain"


MONITORED = "brain:monitored"
"""The brain as ``docs/install.md`` installs it, worker monitor included: nothing set per
topology (the service's default algorithm places it on declared costs), the monitor's shipped
counts mode, the aggregation every 30 s, and the reconfiguration's shipped settings (a re-plan
once the first steady aggregate is in, after the 120 s warm-up; ``scheduler_py/config/keys.py``).
The benchmark waits for that re-plan to end (or for
:data:`scheduler_py.bench.cluster_adaptive.MONITORED_DEADLINE_S`), then measures."""

BRAIN_DEFAULT = "brain:default"
"""The brain with no per-topology setting: the service's default algorithm
(``bench cluster --set brain_args=…`` passes ``scheduler-py serve`` options, e.g. a default
algorithm's ``--param``)."""


def scheduler_spec(name: str) -> SchedulerSpec:
    """``default`` (Storm's DefaultScheduler: Nimbus without our shim), ``ras-default`` /
    ``ras-generic`` (Storm's ResourceAwareScheduler with ``topology.scheduler.strategy``
    DefaultResourceAwareStrategy / GenericResourceAwareStrategy), ``brain:<algorithm>`` (our
    shim and brain, ``scheduler.brain.algorithm`` per topology), ``brain:default`` (our shim
    and brain with nothing set per topology: the service's default algorithm, as an operator
    who sets nothing gets), ``brain:monitored`` (the same, with the worker monitor, the
    aggregation and the re-plan on measured costs as ``docs/install.md`` installs them),
    ``brain:adaptive`` (placed by ``even``, re-placed while it runs:
    :mod:`scheduler_py.bench.cluster_adaptive`)."""
    if name == "default":
        return SchedulerSpec(name, "default", DEFAULT_SCHEDULER)
    if name in ("ras-default", "ras-generic"):
        strategy = (
            "DefaultResourceAwareStrategy"
            if name == "ras-default"
            else "GenericResourceAwareStrategy"
        )
        return SchedulerSpec(
            name, "ras", RAS_SCHEDULER, {"topology.scheduler.strategy": RAS_STRATEGIES + strategy}
        )
    if name == BRAIN_DEFAULT:
        # the service's own default algorithm: no per-topology setting at all
        return SchedulerSpec(name, "brain", BRAIN_SCHEDULER, {})
    if name == MONITORED:
        # nothing set per topology; the monitor's conf comes from cluster_adaptive.py
        return SchedulerSpec(name, "brain", BRAIN_SCHEDULER, {}, monitored=True)
    if name == "brain:adaptive":
        # placed by `even`, re-placed by the monitor and the trigger (cluster_adaptive.py)
        return SchedulerSpec(name, "brain", BRAIN_SCHEDULER, {}, adaptive=True)
    prefix, _, algorithm = name.partition(":")
    if prefix == "brain" and algorithm:
        return SchedulerSpec(
            name, "brain", BRAIN_SCHEDULER, {"scheduler.brain.algorithm": algorithm}
        )
    raise ValueError(
        f"unknown scheduler {name!r}: expected default, ras-default, ras-generic or "
        f"brain:<algorithm> (e.g. {', '.join(ALL_SCHEDULERS)}), {BRAIN_DEFAULT}, "
        f"{MONITORED} or brain:adaptive"
    )


def network_conf(
    spec: SchedulerSpec, host_mbit: float, interrack_mbit: float, payload_bytes: object = None
) -> dict:
    """The topology conf that tells a brain algorithm scoring links what the emulated network
    is (``scheduler.brain.params``: ``rack_link`` = inter-rack / host bandwidth, and for the
    algorithms that take them ``host_mbit`` and the topology's ``payload_bytes``); empty for
    every other scheduler: the registry says which algorithms take which."""
    from scheduler_py.algorithms.registry import algorithms

    info = algorithms().get(str(spec.topology_conf.get("scheduler.brain.algorithm", "")))
    if info is None or "rack_link" not in info.params or host_mbit <= 0 or interrack_mbit <= 0:
        return {}
    params: dict[str, object] = {"rack_link": interrack_mbit / host_mbit}
    if "host_mbit" in info.params:
        params["host_mbit"] = host_mbit
    if "payload_bytes" in info.params and isinstance(payload_bytes, int | float):
        params["payload_bytes"] = payload_bytes
    return {"scheduler.brain.params": params}


# --------------------------------------------------------------------------- topologies

SPOUTS: dict[str, tuple[str, ...]] = {
    "wordcount": ("sentences",),
    "linear": ("word",),
    "diamond": ("spout_head",),
    "star": ("spout_0", "spout_1"),
}
"""Spout components of the JVM topologies (``topologies/README.md``, "JVM topologies")."""

DECLARED_CPU = 10
"""Declared CPU points (100 = a core) per executor, the same for every scheduler: the
topologies' own 50 per spout and 20 per bolt add up to 230–330 points, more than the benchmark's
6 emulated hosts × 0.3 core (180), and then RAS refuses the topology and the brain leaves it
to Storm. At 10 the largest (Diamond, 12 executors and an acker) declares 130."""
NETWORK_CONF: dict[str, object] = {
    "bench.payload.bytes": 8192,
    "bench.cpu.micros": 0,
    "bench.cpu.load": DECLARED_CPU,
}
"""Network-bound: 8 KiB per tuple, no CPU work (the bytes between hosts decide)."""
CPU_CONF: dict[str, object] = {
    "bench.payload.bytes": 64,
    "bench.cpu.micros": 400,
    "bench.cpu.load": DECLARED_CPU,
}
"""CPU-bound: small tuples, 0.4 ms of CPU per tuple in every component."""


@dataclass(frozen=True)
class TopologySpec:
    label: str
    """``linear``, ``linear-cpu``, ``wordcount``, …"""
    jvm_kind: str
    kind: str
    """``network`` or ``cpu`` (a summary field)"""
    conf: Mapping[str, object]
    spouts: tuple[str, ...]


def topology_spec(label: str) -> TopologySpec:
    """``linear|diamond|star`` (network-bound), the same with ``-cpu`` (CPU-bound), or
    ``wordcount`` (CPU-bound: the JVM word count of ``topologies/jvm``)."""
    base, _, suffix = label.partition("-")
    if base not in SPOUTS or suffix not in ("", "cpu") or (base == "wordcount" and suffix):
        raise ValueError(
            f"unknown topology {label!r}: expected linear, diamond, star, linear-cpu, "
            "diamond-cpu, star-cpu or wordcount"
        )
    if base == "wordcount":
        return TopologySpec(label, base, "cpu", {"bench.cpu.load": DECLARED_CPU}, SPOUTS[base])
    cpu = suffix == "cpu"
    return TopologySpec(
        label,
        base,
        "cpu" if cpu else "network",
        dict(CPU_CONF if cpu else NETWORK_CONF),
        SPOUTS[base],
    )


# --------------------------------------------------------------------------- order


@dataclass(frozen=True)
class RunKey:
    repetition: int
    topology: str
    scheduler: str
    loadaware: bool

    @property
    def group(self) -> tuple[str, str, bool]:
        return (self.topology, self.scheduler, self.loadaware)


def run_order(
    topologies: Sequence[str],
    schedulers: Sequence[str],
    loadaware: Sequence[bool],
    repetitions: int,
    *,
    serpentine: bool = True,
) -> list[RunKey]:
    """Every run in the order it happens, interleaved by scheduler class (one cluster per
    class: DefaultScheduler, RAS, brain): each repetition runs every class once, so the
    classes alternate A B C A B C …; ``serpentine`` reverses the class order on odd
    repetitions (A B C C B A …), which keeps the alternation, cancels linear drift like an
    ABBA design, and saves one cluster restart per repetition. Within a class, every
    topology runs each of the class's schedulers and load-aware settings back to back."""
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    specs = [scheduler_spec(name) for name in schedulers]
    classes = [c for c in CLASS_ORDER if any(s.cluster_class == c for s in specs)]
    order: list[RunKey] = []
    for repetition in range(repetitions):
        sequence = classes[::-1] if serpentine and repetition % 2 else classes
        for cluster_class in sequence:
            for topology in topologies:
                for spec in specs:
                    if spec.cluster_class != cluster_class:
                        continue
                    for setting in loadaware:
                        order.append(RunKey(repetition, topology, spec.name, setting))
    return order


def cluster_starts(order: Sequence[RunKey]) -> int:
    """How many clusters :func:`run_order`'s ``order`` starts (one per change of class)."""
    starts, current = 0, None
    for key in order:
        cluster_class = scheduler_spec(key.scheduler).cluster_class
        if cluster_class != current:
            starts, current = starts + 1, cluster_class
    return starts


def parse_bool_list(text: str) -> list[bool]:
    """``"on,off"`` / ``"true,false"`` / ``"both"`` → load-aware settings."""
    if text.strip().lower() == "both":
        return [True, False]
    values = []
    for part in text.split(","):
        word = part.strip().lower()
        if word in ("on", "true", "yes", "1"):
            values.append(True)
        elif word in ("off", "false", "no", "0"):
            values.append(False)
        else:
            raise ValueError(f"loadaware expects on, off or both (comma-separated), got {part!r}")
    return values


# --------------------------------------------------------------------------- brain's prediction


def brain_plan(plan_log: Path, topology_id: str) -> dict[str, Any] | None:
    """The brain's last decision for ``topology_id`` in its plan log (``serve --plan-log``,
    one JSON object per line; ``scheduler_py/scheduling/round.py``): its PLACE entry when it
    placed the topology, else its last word (``LEAVE_TO_STORM`` with the reason)."""
    from scheduler_py.nimbus.placement_table import latest_plan

    return latest_plan(plan_log, topology_id, decision="PLACE") or latest_plan(
        plan_log, topology_id
    )


TRANSFERS_PER_ACKED: dict[str, int] = {"linear": 3, "diamond": 8, "star": 3}
"""Payload-carrying transfers between executors per acked spout tuple (``topologies/README.md``,
"JVM topologies"): Linear's three hops; Diamond's four fan-out copies and their four results;
Star's spout → center hop and center's copy to each of the two outputs. Word count's tuples
change size on the way, so it has no entry."""


def payload_volume(topology: TopologySpec, acked: float | None) -> float | None:
    """Payload bytes the topology moved between executors for ``acked`` spout tuples
    (``None`` for word count or without a count)."""
    transfers = TRANSFERS_PER_ACKED.get(topology.jvm_kind)
    payload = topology.conf.get("bench.payload.bytes")
    if transfers is None or acked is None or not isinstance(payload, int):
        return None
    return acked * transfers * payload


def predicted_traffic(
    entry: Mapping[str, Any] | None,
    span_s: float | None,
    loadaware: bool = True,
    volume_bytes: float | None = None,
) -> dict[str, Any]:
    """What the plan predicted crossing hosts: in the model's unit, and in bytes over
    ``span_s``. The inter-node traffic is the locality-aware routing's
    (:mod:`scheduler_py.model.loadaware`) when Storm's load-aware messaging is on and the plan
    log has it, else the uniform split's. Bytes: measured bytes/s × span when the brain
    planned with measured traffic; with declared costs, the plan's inter-node *share* of the
    user executors' traffic (acking streams carry no payload) × ``volume_bytes`` (the payload
    bytes the measured throughput moved); otherwise
    ``None`` and ``predicted_note`` says why."""
    if entry is None:
        return {
            "brain_decision": None,
            "predicted_inter_host_bytes": None,
            "predicted_note": "no brain plan",
        }
    if entry.get("decision") != "PLACE":
        return {
            "brain_decision": entry.get("decision"),
            "brain_reason": entry.get("reason"),
            "predicted_inter_host_bytes": None,
            "predicted_note": f"the brain did not place it ({entry.get('decision')}): Storm did",
        }
    summary = entry.get("summary") or {}
    routed = summary.get("internode_traffic_loadaware") if loadaware else None
    model = "load-aware" if routed is not None else "uniform"
    traffic = routed if routed is not None else summary.get("internode_traffic")
    share = summary.get(f"user_internode_share_{'loadaware' if routed is not None else 'uniform'}")
    costs = str(summary.get("costs", ""))
    result: dict[str, Any] = {
        "brain_decision": "PLACE",
        "predicted_internode_traffic": traffic,
        "predicted_model": model,
        "predicted_costs": costs,
        "predicted_nodes": summary.get("nodes_used"),
        "predicted_workers": summary.get("workers_used"),
        "predicted_max_node_cpu": summary.get("max_node_load"),
    }
    if traffic is not None and float(traffic) == 0.0:
        result["predicted_inter_host_bytes"] = 0.0
        result["predicted_note"] = f"no traffic between nodes in the plan ({model} routing)"
    elif traffic is not None and span_s and "bytes/s" in costs and costs.startswith("measured"):
        result["predicted_inter_host_bytes"] = float(traffic) * span_s
        result["predicted_note"] = f"measured bytes/s × span ({model} routing)"
    elif share is not None and volume_bytes is not None:
        result["predicted_inter_host_bytes"] = float(share) * volume_bytes
        result["predicted_note"] = (
            f"declared costs: {float(share):.0%} of the user executors' traffic crosses nodes "
            f"({model} routing) × the payload bytes the measured throughput moved"
        )
    else:
        result["predicted_inter_host_bytes"] = None
        result["predicted_note"] = f"costs {costs or 'unknown'}: traffic in model units, not bytes"
    return result


# --------------------------------------------------------------------------- summary


def median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def value_range(values: Iterable[float | None]) -> tuple[float, float] | None:
    present = [v for v in values if v is not None]
    return (min(present), max(present)) if present else None


def summarise(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (topology, scheduler, load-aware) in first-seen order, with the fixed
    fields (:data:`SUMMARY_FIELDS`) and extras: min/max throughput and p99, p50, workers,
    CPU of the busiest host. Failed runs (``error`` set) count in ``failed_runs`` only, and
    runs whose placement changed while they were measured (``placement_held`` false: a
    re-plan's stage or Storm moving executors inside the interval, so the rate is of no one
    placement) in ``moved_runs`` only."""
    groups: dict[tuple[str, str, bool], list[Mapping[str, Any]]] = {}
    for run in runs:
        groups.setdefault((run["topology"], run["scheduler"], run["loadaware"]), []).append(run)
    rows = []
    for (topology, scheduler, loadaware), members in groups.items():
        completed = [r for r in members if not r.get("error")]
        ok = [r for r in completed if r.get("placement_held") is not False]
        throughput = [r.get("throughput") for r in ok]
        p99 = [r.get("p99_ms") for r in ok]
        rows.append(
            {
                "topology": topology,
                "kind": members[0]["kind"],
                "scheduler": scheduler,
                "loadaware": loadaware,
                "runs": len(ok),
                "throughput_median": median(throughput),
                "p99_ms_median": median(p99),
                "inter_host_bytes_median": median(r.get("inter_host_bytes") for r in ok),
                "predicted_inter_host_bytes": median(
                    r.get("predicted_inter_host_bytes") for r in ok
                ),
                "hosts_median": median(r.get("hosts") for r in ok),
                "failed_runs": len(members) - len(completed),
                "moved_runs": len(completed) - len(ok),
                "instances": len({r["cluster_instance"] for r in ok if "cluster_instance" in r})
                or None,
                "left_to_storm_runs": sum(
                    1 for r in ok if r.get("brain_decision") not in (None, "PLACE")
                ),
                "throughput_range": value_range(throughput),
                "p99_ms_range": value_range(p99),
                "p50_ms_median": median(r.get("p50_ms") for r in ok),
                "workers_median": median(r.get("workers") for r in ok),
                "max_host_cpu_cores_median": median(r.get("max_host_cpu_cores") for r in ok),
                "predicted_internode_traffic": median(
                    r.get("predicted_internode_traffic") for r in ok
                ),
                "measured_from_s_median": median(r.get("measured_from_s") for r in ok),
                "levelled_off_runs": (
                    sum(1 for r in ok if r["warmup_levelled_off"])
                    if ok and all("warmup_levelled_off" in r for r in ok)
                    else None
                ),
            }
        )
    return rows


MEASURED_FROM_TOLERANCE_S = 60.0
"""How far apart two rows' measured intervals may start (seconds after every spout first
acked) and still be compared: a CPU-bound topology's rate still rose 20-33 % between 30-95 s
and 150 s after its first acks on the emulated hosts
(``docs/results/emulated-network/throughput-default/README.md``, sixth set)."""


def not_comparable(a: Mapping[str, Any], b: Mapping[str, Any]) -> str | None:
    """Why rows ``a`` and ``b`` cannot be compared — their runs were measured at very
    different times after the topology first acked (a ``brain:monitored`` run waits for its
    re-plan, the others only a fixed warm-up) while the rate of either may still have been
    rising — or ``None``. Rows whose every run was measured after its rate levelled off are
    comparable however long each took to level off."""
    if all(_levelled_off(row) for row in (a, b)):
        return None
    start_a, start_b = a.get("measured_from_s_median"), b.get("measured_from_s_median")
    if start_a is None or start_b is None or abs(start_a - start_b) <= MEASURED_FROM_TOLERANCE_S:
        return None
    return (
        f"not comparable: {a['scheduler']} measured from {start_a:.0f} s after its first acks, "
        f"{b['scheduler']} from {start_b:.0f} s (--set warmup=steady measures each run once "
        f"its rate has levelled off, --set warmup={max(start_a, start_b):.0f} every run that "
        "late)"
    )


def _levelled_off(row: Mapping[str, Any]) -> bool:
    """Every run of the row was measured after its acked rate levelled off
    (``--set warmup=steady``, :mod:`scheduler_py.bench.cluster_warmup`)."""
    return row.get("levelled_off_runs") is not None and row["levelled_off_runs"] == row["runs"]


def baseline(
    rows: Sequence[Mapping[str, Any]], topology: str, loadaware: bool, schedulers: Iterable[str]
) -> Mapping[str, Any] | None:
    """The row with the highest median throughput among ``schedulers`` for ``topology`` and
    ``loadaware`` (the best RAS strategy as "RAS"), or ``None``."""
    names = set(schedulers)
    candidates = [
        r
        for r in rows
        if r["topology"] == topology
        and r["loadaware"] == loadaware
        and r["scheduler"] in names
        and r["throughput_median"] is not None
    ]
    return max(candidates, key=lambda r: r["throughput_median"], default=None)


def best_brain(
    rows: Sequence[Mapping[str, Any]], topology: str, loadaware: bool
) -> Mapping[str, Any] | None:
    """The best *static* brain placement (``brain:adaptive`` has its own target)."""
    brains = {
        r["scheduler"]
        for r in rows
        if r["scheduler"].startswith("brain:") and r["scheduler"] != "brain:adaptive"
    }
    return baseline(rows, topology, loadaware, brains)


def network_target(
    rows: Sequence[Mapping[str, Any]],
    topology: str,
    loadaware: bool,
    default_over_orders: float | None = None,
) -> tuple[bool | None, str]:
    """The network-bound target for one topology: the best brain algorithm ≥ +30 %
    throughput vs DefaultScheduler and ≥ +10 % vs RAS, p99 no worse than either; ``None``
    when a side is missing. Returns (verdict, detail).

    DefaultScheduler's throughput is its median over every supervisor-id order
    (``default_over_orders``, from :func:`scheduler_py.bench.default_orders.session_check`)
    when the session has it, as the target is stated: a few cluster instances draw a few
    orders, and which ones is luck (one order class in five may hold the best placement).
    Without it, the median of the measured instances."""
    brain = best_brain(rows, topology, loadaware)
    default = baseline(rows, topology, loadaware, ["default"])
    ras = baseline(rows, topology, loadaware, ["ras-default", "ras-generic"])
    if brain is None or default is None or ras is None:
        return None, "needs default, a RAS strategy and a brain algorithm with measurements"
    apart = not_comparable(brain, default) or not_comparable(brain, ras)
    if apart:
        return None, apart
    measured_default = default["throughput_median"]
    reference = default_over_orders or measured_default
    vs_default = brain["throughput_median"] / reference
    vs_ras = brain["throughput_median"] / ras["throughput_median"]
    p99s = [brain["p99_ms_median"], default["p99_ms_median"], ras["p99_ms_median"]]
    p99_ok = None if None in p99s else p99s[0] <= min(p99s[1], p99s[2])
    passed = vs_default >= 1.30 and vs_ras >= 1.10 and p99_ok is not False
    instances = default.get("instances")
    if default_over_orders:
        basis = (
            f"; default: median over every supervisor-id order {default_over_orders:,.0f}/s "
            f"(its measured instances {measured_default:,.0f}/s, "
            f"{brain['throughput_median'] / measured_default:.2f}×)"
        )
    else:
        basis = "" if instances is None else f"; default over {instances} cluster instance(s)"
    detail = (
        f"{brain['scheduler']} {vs_default:.2f}× default, {vs_ras:.2f}× {ras['scheduler']}; "
        f"p99 {_ms(p99s[0])} vs {_ms(p99s[1])} / {_ms(p99s[2])}" + basis
    )
    return passed, detail


def cpu_target(
    rows: Sequence[Mapping[str, Any]], topology: str, loadaware: bool
) -> tuple[bool | None, str]:
    """The CPU-bound target: some brain algorithm uses no more hosts than RAS (its best
    strategy) at ≥ RAS's throughput. Of the static brain algorithms on at most RAS's hosts,
    the fastest is compared; when none fits in RAS's hosts, the fastest of all is reported."""
    ras = baseline(rows, topology, loadaware, ["ras-default", "ras-generic"])
    if ras is None or ras["hosts_median"] is None:
        return None, "needs a RAS strategy and a brain algorithm with measurements"
    brains = [
        r
        for r in rows
        if r["scheduler"].startswith("brain:")
        and r["scheduler"] != "brain:adaptive"
        and r["hosts_median"] is not None
    ]
    within = [r["scheduler"] for r in brains if r["hosts_median"] <= ras["hosts_median"]]
    brain = baseline(rows, topology, loadaware, within) or best_brain(rows, topology, loadaware)
    if brain is None or brain["hosts_median"] is None:
        return None, "needs a RAS strategy and a brain algorithm with measurements"
    apart = not_comparable(brain, ras)
    if apart:
        return None, apart
    passed = (
        brain["hosts_median"] <= ras["hosts_median"]
        and brain["throughput_median"] >= ras["throughput_median"]
    )
    detail = (
        f"{brain['scheduler']} {brain['hosts_median']:g} host(s) at "
        f"{brain['throughput_median']:,.0f}/s vs {ras['scheduler']} {ras['hosts_median']:g} "
        f"at {ras['throughput_median']:,.0f}/s"
    )
    return passed, detail


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} ms"


# --------------------------------------------------------------------------- monitor's bytes


def host_of_task(executors: Iterable[tuple[int, int, str]]) -> dict[int, str]:
    """task -> host from ``(task_start, task_end, host)`` of every executor."""
    return {task: host for start, end, host in executors for task in range(start, end + 1)}


def monitor_inter_host_bytes(
    records: Iterable[Any], hosts: Mapping[int, str], start_ms: int, end_ms: int
) -> tuple[float | None, int]:
    """Bytes between tasks on different hosts over ``[start_ms, end_ms]``, from the worker
    monitor's window records (``scheduler_py/monitoring/records.py``: ``traffic`` counted
    at emit time, bytes estimated from sampled tuple sizes). Only windows wholly inside the
    interval count; each worker's rate (its bytes / its windows' length) is scaled to the
    interval, and the workers' sums added. Returns (bytes or ``None`` without a window,
    windows used)."""
    per_worker: dict[tuple[str, int], list[float]] = {}
    used = 0
    for record in records:
        if record.window_start_ms < start_ms or record.window_end_ms > end_ms:
            continue
        crossing = sum(
            sample.bytes
            for sample in record.traffic
            if sample.src in hosts
            and sample.dst in hosts
            and hosts[sample.src] != hosts[sample.dst]
        )
        seconds = (record.window_end_ms - record.window_start_ms) / 1000
        totals = per_worker.setdefault((record.supervisor_id, record.port), [0.0, 0.0])
        totals[0] += crossing
        totals[1] += seconds
        used += 1
    if not used:
        return None, 0
    span = (end_ms - start_ms) / 1000
    return sum(b / s * span for b, s in per_worker.values() if s > 0), used
