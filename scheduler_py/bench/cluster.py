"""JVM Linear/Diamond/Star (network- and CPU-bound) on a real local cluster, emulated hosts when
available: DefaultScheduler vs RAS (default/generic strategy) vs the brain's algorithms, load-
aware messaging on/off, interleaved runs; throughput, p50/p99, inter-host bytes, hosts used;
the targets of docs/evaluation.md, "Evaluation on an emulated network".

``scheduler-py bench cluster`` (``make bench-cluster``): the JVM
topologies (``topologies/jvm``: R-Storm's Linear, Diamond, Star, network- and CPU-bound, and
word count) on a real local cluster under Storm's DefaultScheduler, Storm's RAS (Default and
Generic resource-aware strategies) and the brain with each algorithm, with Storm's load-aware
messaging on and off; interleaved runs, medians with min–max, ratios to DefaultScheduler and
to RAS, PASS/MISS for the targets, ``bench-results/cluster.json`` and ``cluster.png``.

The cluster: ``deploy/cluster-up.sh`` in ``build/bench-cluster`` (``--set cluster_dir=``)
with ``CLUSTER_PORT_OFFSET`` from ``--set port_offset=``, the environment, or 3000. One
cluster per scheduler *class* (a Nimbus ``storm.scheduler``: DefaultScheduler = Nimbus
without our shim; ResourceAwareScheduler, whose strategy is the topology's
``topology.scheduler.strategy``; the shim + brain, whose algorithm is the topology's
``scheduler.brain.algorithm``). One cluster (the brain always started) whose Nimbus alone is
restarted with the next class's ``storm.scheduler`` when the class changes
(``--set restart=nimbus``, the default; ``restart=cluster`` restarts the whole cluster;
``restart=run`` starts a new cluster for every run, so that every run of DefaultScheduler
draws its own supervisor-id order: :mod:`scheduler_py.bench.default_orders`); the
run order (:func:`scheduler_py.bench.cluster_runs.run_order`) alternates classes
A B C C B A … The
worker monitor and the aggregation are off for every class (the same data path for all;
``--set monitor=yes`` turns the monitor on for all).

Emulated hosts (``deploy/emulated-hosts.sh``): ``EMU_HOSTS``, ``EMU_RACKS``, ``EMU_HOST_CPU``,
``EMU_HOST_MBIT``, ``EMU_INTERRACK_MBIT`` (environment or ``--set emu_hosts=6`` …; defaults
6 hosts, 2 racks, 0.3 core: the evaluation's setting) go to cluster-up. When it writes
``run/emulated-hosts.json`` (:mod:`scheduler_py.devtools.host_counters`), inter-host bytes
come from the hosts' veth counters and CPU per host from their cgroups. Otherwise (or with
``--set emulation=no``) the benchmark runs on the loopback cluster and says so loudly:
inter-host bytes are then ``null`` with the reason, and CPU per host is the CPU time of each
supervisor's process group (the supervisor and its workers).

Each run: ``storm jar`` the topology with the scheduler's conf, the same declared resources
for every scheduler (the topologies declare them; ``topologies/README.md``),
``topology.disable.loadaware.messaging`` and ``bench.latency.dir``; wait until every spout
acks, warm up, measure an interval (spouts' acked counts aligned on fresh stats heartbeats;
p50/p99 complete latency from the spouts' histograms; counters), read where Nimbus put the
executors (hosts, workers) and the brain's plan (its predicted inter-node traffic), kill.

Options (``--set key=value``): ``topologies`` (default linear, diamond, star and their
``-cpu`` variants), ``schedulers`` (default, ras-default, ras-generic, brain:rstorm, t3,
online, metis, td, tdls, locality, links, adaptive), ``loadaware`` (on, off or both; default
both), ``repetitions``
(3), ``warmup`` (``steady``, the default: until the spouts' acked rate has levelled off,
:mod:`scheduler_py.bench.cluster_warmup`; or a fixed time, ``--quick``'s 20 s),
``interval`` (s), ``order`` (serpentine or cycle), ``restart`` (nimbus,
cluster or run), ``ready_timeout`` (s), ``emulation``
(auto, yes, no), ``monitor`` (no), ``supervisors`` (loopback only), ``compiler`` (``c2``,
the JVM's default that operators run, or ``c1``: ``deploy/cluster-up.sh``'s quick-start
``-XX:TieredStopAtLevel=1``; the same for every scheduler). ``--quick``: linear ×
default, ras-default, brain:locality × load-aware on × 2 repetitions, shorter intervals.
``brain:adaptive`` (:mod:`scheduler_py.bench.cluster_adaptive`): placed by ``even``, re-placed
by the monitor, the aggregation and the trigger while it runs; ``adaptive_algorithm``
(``locality``) is its re-plans' algorithm, ``adaptive_placed_by`` (``even``) its first
placement's. ``brain:default``: the brain with nothing set per
topology (the service's default algorithm); ``brain:monitored``: the same with the worker
monitor (counts mode), the aggregation (every 30 s) and the re-plan on measured costs as
``docs/install.md`` installs them, measured once that re-plan has ended, with its last stage
when it is staged (:data:`scheduler_py.bench.cluster_runs.MONITORED`); ``brain_args``
passes ``scheduler-py serve`` options to the brain (e.g. ``--algorithm throughput --param
host_mbit=100``: a network the service is told once). Every run's placement is predicted by
the throughput model (``scheduler_py/model/throughput.py``) beside its measured rate.

At ~650 lines this module is the benchmark's driver only — starting and switching the
cluster, measuring one run, the session that interleaves them; the pure parts (run order,
summaries, targets) are in ``cluster_runs.py`` and the output in ``cluster_report.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scheduler_py.bench import cluster_adaptive as adaptive
from scheduler_py.bench import (
    cluster_calibration,
    cluster_report,
    cluster_warmup,
    default_orders,
    report,
)
from scheduler_py.bench.checkout import REPO
from scheduler_py.bench.cluster_links import link_check, routed_links
from scheduler_py.bench.cluster_report import draw, median_text, progress, tables
from scheduler_py.bench.cluster_runs import (
    ALL_SCHEDULERS,
    QUICK_SCHEDULERS,
    SUMMARY_FIELDS,
    RunKey,
    SchedulerSpec,
    TopologySpec,
    brain_plan,
    cluster_starts,
    host_of_task,
    monitor_inter_host_bytes,
    network_conf,
    parse_bool_list,
    payload_volume,
    predicted_traffic,
    run_order,
    scheduler_spec,
    summarise,
    topology_spec,
)
from scheduler_py.bench.local_cluster import (
    COMPILERS,
    LocalCluster,
    aligned_counts,
    compiler_setting,
    mean,
    step_rate,
)
from scheduler_py.bench.monitor_overhead import histogram_delta, percentile, read_histograms
from scheduler_py.bench.registry import BenchOptions, seconds_setting
from scheduler_py.devtools import host_counters
from scheduler_py.devtools.emulated_hosts import EmulatedHosts
from scheduler_py.devtools.storm_daemon import start_daemon

NAME = "cluster"
PAPER = "emulated multi-host cluster vs Storm's DefaultScheduler and RAS"
TOPOLOGIES = ("linear", "diamond", "star", "linear-cpu", "diamond-cpu", "star-cpu")
QUICK_TOPOLOGIES = ("linear",)
REPETITIONS, QUICK_REPETITIONS = 3, 2
QUICK_WARMUP_S = 20.0
INTERVAL_S, QUICK_INTERVAL_S = 120.0, 30.0
READY_TIMEOUT_S = 240.0
"""From ``storm jar`` until every spout executor has acked: a scheduling round, worker JVMs
starting on a busy 2-core machine, the first stats heartbeat."""
RUN_OVERHEAD_S, CLUSTER_START_S, NIMBUS_RESTART_S = 75.0, 60.0, 30.0
"""For the printed estimate only: submit + ready + kill per run, one cluster start, one
Nimbus-only restart."""
NIMBUS_TIMEOUT_MS = 30_000
EMU_DEFAULTS = {"EMU_HOSTS": "6", "EMU_RACKS": "2", "EMU_HOST_CPU": "0.3"}
EMU_KEYS = ("EMU_HOSTS", "EMU_RACKS", "EMU_HOST_CPU", "EMU_HOST_MBIT", "EMU_INTERRACK_MBIT")
TOPOLOGY_CONF: dict[str, object] = {"topology.acker.executors": 1}
LOOPBACK_WORKERS = 3
"""``topology.workers`` on the loopback cluster. With emulated hosts it is the number of hosts,
as R-Storm's evaluation gave Storm's default scheduler one worker per machine
(``setNumWorkers(12)`` on 12 machines; ``../shared/docs/003_rstorm.md`` §3.1); RAS ignores it,
and the brain's plans use at most that many workers. ``--set workers=N`` overrides both."""


# --------------------------------------------------------------------------- the cluster


class _BenchCluster(LocalCluster):
    """The benchmarks' local cluster (``scheduler_py/bench/local_cluster.py``) with a
    chosen Nimbus scheduler, optional emulated hosts, and the spouts of the topology being
    measured."""

    def __init__(
        self,
        directory: Path,
        port_offset: str,
        spec: SchedulerSpec,
        emulation: Mapping[str, str] | None,
        monitor: bool,
        supervisors: str | None,
        brain: bool = False,
        brain_args: str = "",
        compiler: str = COMPILERS[0],
    ) -> None:
        """``brain``: start the brain whatever the scheduler (Nimbus without our shim never
        calls it, and its reconfiguration controller only sees topologies the shim sends),
        so :meth:`switch_scheduler` can later make it Nimbus's scheduler."""
        super().__init__(directory, aggregate=False, port_offset=port_offset)
        for key in EMU_KEYS:
            self.env.pop(key, None)
        self.env.update(
            STORM_SCHEDULER=spec.storm_scheduler,
            BRAIN="yes" if spec.brain or brain else "no",
            STORM_MONITOR="yes" if monitor else "no",
            **(emulation or {}),
        )
        if supervisors and not emulation:
            self.env["STORM_SUPERVISORS"] = supervisors
        if brain_args:  # `scheduler-py serve` options (deploy/cluster-up.sh, BRAIN_ARGS)
            self.env["BRAIN_ARGS"] = brain_args
        self.use_compiler(compiler)
        self.spec = spec
        self.spout_components: tuple[str, ...] = ()
        self.hosts: EmulatedHosts | None = None
        self.instance = 0
        """Which of the session's cluster starts this is (1, 2, …): runs with the same
        number share the supervisors, and so their ids."""

    def up(self) -> None:
        super().up()
        self.nimbus.timeout_ms = NIMBUS_TIMEOUT_MS
        self.hosts = host_counters.load_if_present(self.directory)

    def switch_scheduler(self, spec: SchedulerSpec, timeout: float) -> None:
        """Restart Nimbus alone with ``spec``'s ``storm.scheduler`` (ZooKeeper, the
        supervisors, the brain and the emulated hosts stay): stop it (its own process
        group, as ``deploy/cluster-up.sh`` starts it), rewrite the line in its storm.yaml,
        start it the way cluster-up does (same conf dir, log dir, pid file), and wait until
        every supervisor is registered again. No topology may be running."""
        conf = self.directory / "conf" / "nimbus" / "storm.yaml"
        pid_file = self.directory / "run" / "nimbus.pid"
        supervisors = len(self.nimbus.cluster_summary()["supervisors"])
        pid = int(pid_file.read_text().strip())
        _stop_group(pid, timeout)
        conf.write_text(with_scheduler(conf.read_text(), spec.storm_scheduler, str(conf)))
        process = start_daemon(self.directory, self.env, "nimbus", "nimbus")
        self.spec = spec
        deadline = time.monotonic() + timeout
        while True:
            try:
                summary = self.nimbus.cluster_summary()
                if len(summary["supervisors"]) >= supervisors:
                    return
            except Exception:  # Nimbus not up yet
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"Nimbus restarted with {spec.storm_scheduler} did not see the "
                    f"{supervisors} supervisors within {timeout:.0f} s (exit code "
                    f"{process.poll()}); see {self.directory / 'logs' / 'nimbus.log'}"
                )
            time.sleep(1.0)

    def supervisor_order(self) -> list[str]:
        """The hosts (emulated host names, else addresses) in the order of their
        supervisors' ids: the order DefaultScheduler deals its slots in
        (:mod:`scheduler_py.bench.default_orders`)."""
        name_of = _host_of_address(self.hosts) if self.hosts else {}
        supervisors = sorted(
            self.nimbus.cluster_summary()["supervisors"], key=lambda s: s["supervisor_id"]
        )
        return [name_of.get(s["host"], s["host"]) for s in supervisors]

    def spout_counts(self, name: str) -> dict[str, int]:
        return {
            f"{r.task_start}-{r.task_end}@{r.host}:{r.port}": r.acked
            for r in self.nimbus.executor_runs(name)
            if r.component in self.spout_components
        }

    def supervisor_groups(self) -> dict[str, int]:
        """host -> process group of its supervisor (loopback CPU per host)."""
        count = int(self.env.get("STORM_SUPERVISORS", "3"))
        named = self.env.get("STORM_SUPERVISOR_HOSTS", "").split()
        groups = {}
        for i in range(1, count + 1):
            pid_file = self.directory / "run" / f"supervisor-{i}.pid"
            try:
                pid = int(pid_file.read_text().strip())
            except (OSError, ValueError):
                continue
            groups[named[i - 1] if len(named) >= i else f"127.0.0.{i}"] = pid
        return groups


def with_scheduler(storm_yaml: str, scheduler: str, source: str = "storm.yaml") -> str:
    """``storm_yaml`` with its ``storm.scheduler`` line set to ``scheduler``."""
    lines = storm_yaml.splitlines()
    if not any(x.startswith("storm.scheduler:") for x in lines):
        raise RuntimeError(f"{source} has no storm.scheduler line to change")
    return (
        "\n".join(
            f'storm.scheduler: "{scheduler}"' if x.startswith("storm.scheduler:") else x
            for x in lines
        )
        + "\n"
    )


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not; one that is our child is reaped here: the
    Nimbus :meth:`_BenchCluster.switch_scheduler` started)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _stop_group(pid: int, timeout: float) -> None:
    """SIGTERM the process group ``pid`` leads, SIGKILL after ``timeout``; wait until the
    leader is gone."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    while _alive(pid) and time.monotonic() < deadline + 30:
        time.sleep(0.5)


def group_cpu_seconds(groups: Mapping[str, int]) -> dict[str, float]:
    """host -> CPU-seconds (user + system) of the live processes in its process group."""
    totals = dict.fromkeys(groups, 0.0)
    host_of = {pgid: host for host, pgid in groups.items()}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        host = host_of.get(int(fields[2]))
        if host is not None:
            totals[host] += (int(fields[11]) + int(fields[12])) / tick
    return totals


class _Counters:
    """Per-host counters over an interval: veth and cgroup counters on emulated hosts, the
    supervisors' process groups' CPU on the loopback cluster."""

    def __init__(self, cluster: _BenchCluster) -> None:
        self.cluster = cluster
        self.reader = (
            host_counters.CounterReader(cluster.hosts) if cluster.hosts is not None else None
        )
        self.start: Any = None
        self.started_at = 0.0

    def begin(self) -> None:
        self.started_at = time.monotonic()
        if self.reader is not None:
            self.start = self.reader.snapshot()
        else:
            self.start = group_cpu_seconds(self.cluster.supervisor_groups())

    def end(self) -> dict[str, Any]:
        if self.reader is not None:
            delta = self.reader.snapshot().minus(self.start)
            cores = delta.cpu_cores()
            return {
                "inter_host_bytes": delta.inter_host_bytes,
                "inter_rack_bytes": delta.inter_rack_bytes,
                "inter_host_bytes_note": "veth counters: bytes the hosts sent",
                "counter_span_s": delta.at,
                "host_cpu_cores": cores,
                "host_sent_bytes": {n: s.sent_bytes for n, s in delta.hosts.items()},
                "host_received_bytes": {n: s.received_bytes for n, s in delta.hosts.items()},
            }
        span = time.monotonic() - self.started_at
        now = group_cpu_seconds(self.cluster.supervisor_groups())
        cores = {h: (now[h] - self.start.get(h, 0.0)) / span for h in now if span > 0}
        return {
            "inter_host_bytes": None,
            "inter_rack_bytes": None,
            "inter_host_bytes_note": "loopback cluster: no per-host network counters "
            "(emulated hosts unavailable; --set monitor=yes counts the worker monitor's bytes)",
            "counter_span_s": span,
            "host_cpu_cores": cores,
        }


# --------------------------------------------------------------------------- one run


def _wait_acking(cluster: _BenchCluster, name: str, timeout: float) -> float:
    """Seconds until every spout executor has acked at least one tuple."""
    started = time.monotonic()
    while True:
        counts = cluster.spout_counts(name)
        if counts and all(c > 0 for c in counts.values()):
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise TimeoutError(
                f"{name}: the spouts ({', '.join(cluster.spout_components)}) had not all "
                f"acked a tuple {timeout:.0f} s after submission (counts {counts}); see "
                f"the cluster's logs in {cluster.directory / 'logs'}"
            )
        time.sleep(1.0)


def _measure(
    cluster: _BenchCluster,
    key: RunKey,
    topology: TopologySpec,
    settings: Mapping[str, Any],
    index: int,
    scratch: Path,
) -> dict[str, Any]:
    spec = scheduler_spec(key.scheduler)
    name = f"bc{index}-{topology.label}"
    latency_dir = scratch / f"latency-{index}"
    conf = {
        **TOPOLOGY_CONF,
        "topology.workers": settings["workers"]
        or (len(cluster.hosts.hosts) if cluster.hosts is not None else LOOPBACK_WORKERS),
        **topology.conf,
        **spec.topology_conf,
        **(
            network_conf(
                spec,
                cluster.hosts.host_mbit,
                cluster.hosts.interrack_mbit,
                topology.conf.get("bench.payload.bytes"),
            )
            if cluster.hosts is not None
            else {}
        ),
        **(
            adaptive.topology_conf(settings["adaptive_algorithm"], settings["adaptive_placed_by"])
            if spec.adaptive
            else {}
        ),
        **(adaptive.MONITORED_CONF if spec.monitored else {}),
        "topology.disable.loadaware.messaging": not key.loadaware,
        "bench.latency.dir": str(latency_dir),
    }
    result: dict[str, Any] = {
        "index": index,
        "repetition": key.repetition,
        "topology": topology.label,
        "kind": topology.kind,
        "scheduler": key.scheduler,
        "loadaware": key.loadaware,
        "emulated": cluster.hosts is not None,
        "cluster_instance": cluster.instance,
        "conf": conf,
    }
    cluster.spout_components = topology.spouts
    from scheduler_py.devtools import jvm_topologies

    submitted = time.monotonic()
    try:
        if spec.follows_replans:
            every, window = (
                (adaptive.MONITORED_AGGREGATE_EVERY, adaptive.MONITORED_AGGREGATE_WINDOW)
                if spec.monitored
                else (adaptive.AGGREGATE_EVERY, adaptive.AGGREGATE_WINDOW)
            )
            cluster.start_aggregation(every, scratch / f"aggregate-{index}.log", window=window)
        topology_id = jvm_topologies.submit(topology.jvm_kind, name, conf, env=cluster.env)
        result["topology_id"] = topology_id
        _wait_acking(cluster, name, settings["ready_timeout"])
        ready_at = time.monotonic()
        result["ready_s"] = ready_at - submitted
        if spec.follows_replans:
            result.update(
                adaptive.follow(
                    lambda: cluster.spout_counts(name),
                    lambda: cluster.history(name),
                    ready_at,
                    settle_s=0.0 if settings["steady_warmup"] else settings["warmup"],
                    deadline_s=(
                        adaptive.MONITORED_DEADLINE_S if spec.monitored else adaptive.DEADLINE_S
                    ),
                )
            )
        if settings["steady_warmup"]:
            since = warmup_start(ready_at, result)
            result["warmup_from_s"] = since - ready_at
            result.update(
                cluster_warmup.wait_levelled_off(lambda: cluster.spout_counts(name), since)
            )
        elif not spec.follows_replans:
            time.sleep(settings["warmup"])
        counters = _Counters(cluster)
        placement_at_start = executor_placement(cluster.nimbus.executor_runs(name))
        start = aligned_counts(cluster, name)
        result["measured_from_s"] = time.monotonic() - ready_at
        counters.begin()
        start_ms = int(time.time() * 1000)
        histograms_start = read_histograms(latency_dir)
        time.sleep(settings["interval"])
        end = aligned_counts(cluster, name)
        measured = counters.end()
        end_ms = int(time.time() * 1000)
        result["measured_end_s"] = time.monotonic() - ready_at
        histograms_end = read_histograms(latency_dir)
        runs = cluster.nimbus.executor_runs(name)
        state = cluster.nimbus.topology_state(name)
        if spec.follows_replans:
            result["reconfigurations"] = adaptive.reconfigurations(
                lambda: cluster.history(name)
            ) or result.get("reconfigurations", [])
        span = mean([end[k][0] - start[k][0] for k in start if k in end])
        if not runs:
            raise RuntimeError(
                f"{name}: no executor of the topology was running at the end of the measured "
                f"interval (supervisors lost? see {cluster.directory / 'logs'}); this run "
                "measured nothing"
            )
        placement = executor_placement(runs)
        counts = histogram_delta(histograms_start, histograms_end)
        cores = measured["host_cpu_cores"]
        result.update(
            {
                "throughput": step_rate(start, end),
                "span_s": span,
                "latency_samples": sum(counts),
                "p50_ms": percentile(counts, 0.50),
                "p99_ms": percentile(counts, 0.99),
                "hosts": len({r.host for r in runs}),
                "workers": len({(r.host, r.port) for r in runs}),
                "worker_slots": sorted({f"{r.host}:{r.port}" for r in runs}),
                "placement": placement,
                "placement_held": placement == placement_at_start,
                "failed_total": state.failed if state else None,
                "max_host_cpu_cores": max(cores.values()) if cores else None,
                **measured,
            }
        )
        result["supervisor_order"] = cluster.supervisor_order()
        if cluster.hosts is not None:
            result["routed_link"] = _routed_link(cluster.hosts, topology, result, key.loadaware)
        if cluster.hosts is not None and not key.loadaware:
            result["link_model"] = _link_model(cluster.hosts, topology, result)
        if settings["monitor"]:
            result.update(_monitor_bytes(cluster, topology_id, runs, start_ms, end_ms))
        if spec.brain:
            plan = brain_plan(cluster.directory / "logs" / "brain-plans.jsonl", topology_id)
            # over the span the counters measured, to compare with inter_host_bytes
            span_s = measured["counter_span_s"]
            acked = None if span_s is None else result["throughput"] * span_s
            volume = payload_volume(topology, acked)
            result.update(predicted_traffic(plan, span_s, key.loadaware, volume))
    except Exception as error:  # one failed run must not lose the others' results
        result["error"] = f"{type(error).__name__}: {error}"
    finally:
        try:
            cluster.kill(name)
        except Exception as error:
            result.setdefault("error", f"kill failed: {error}")
        if spec.follows_replans:
            cluster.stop_aggregation()
    result["load_average"] = os.getloadavg()[0]
    return result


def warmup_start(ready_at: float, result: Mapping[str, Any]) -> float:
    """When a run's steady warm-up starts counting: the first acks, or the end of the
    re-plan it followed (``reconfigured_s`` after them). A brain run is then given the same
    time to level off after its last move as another run after its first acks; counted from
    the first acks, a re-plan staged in two that ended 6 minutes in left the warm-up too little
    of its 600 s (``docs/results/emulated-network/throughput-default/README.md``, tenth set,
    run 2)."""
    ended = result.get("reconfigured_s")
    return ready_at + ended if isinstance(ended, (int, float)) and ended > 0 else ready_at


def _host_of_address(hosts: EmulatedHosts) -> dict[str, str]:
    return {h.address: h.name for h in hosts.hosts}


def _rack_of_host(hosts: EmulatedHosts) -> dict[str, str]:
    return {h.name: h.rack for h in hosts.hosts}


def _rack_link(hosts: EmulatedHosts) -> float:
    """The rack uplink's bandwidth as a share of a host link's (the link models' unit)."""
    return hosts.interrack_mbit / hosts.host_mbit if hosts.host_mbit > 0 else 1.0


def _link_model(
    hosts: EmulatedHosts, topology: TopologySpec, result: Mapping[str, Any]
) -> dict[str, Any]:
    """The uniform-shuffle link model against the veth counters (:mod:`.cluster_links`)."""
    return link_check(
        topology.label,
        result["placement"],
        _host_of_address(hosts),
        _rack_of_host(hosts),
        result.get("host_sent_bytes") or {},
        _rack_link(hosts),
    )


def _routed_link(
    hosts: EmulatedHosts, topology: TopologySpec, result: Mapping[str, Any], loadaware: bool
) -> dict[str, Any]:
    """The busiest link of the run's placement under Storm's routing
    (:func:`scheduler_py.bench.cluster_links.routed_links`)."""
    return routed_links(
        topology.label,
        result["placement"],
        _host_of_address(hosts),
        _rack_of_host(hosts),
        loadaware,
        _rack_link(hosts),
    )


def executor_placement(runs: Sequence[Any]) -> dict[str, list[str]]:
    """Where Nimbus put each executor: ``component -> ["host:port", …]`` in task order, so a
    run's placement can be compared across schedulers after the fact."""
    result: dict[str, list[tuple[int, str]]] = {}
    for run in runs:
        result.setdefault(run.component, []).append((run.task_start, f"{run.host}:{run.port}"))
    return {component: [slot for _, slot in sorted(slots)] for component, slots in result.items()}


def _monitor_bytes(
    cluster: _BenchCluster, topology_id: str, runs: Sequence[Any], start_ms: int, end_ms: int
) -> dict[str, Any]:
    """Inter-host bytes the worker monitor counted over the interval (its window records in
    ZooKeeper); on the loopback cluster they stand in for the veth counters."""
    from scheduler_py.monitoring.records import CorruptRecord, parse_window
    from scheduler_py.monitoring.zk import MonitorStore, close_quietly, connect

    client = connect(f"{cluster.env['STORM_ZK_HOST']}:{cluster.env['STORM_ZK_PORT']}")
    try:
        windows = MonitorStore(client).load_windows(topology_id)
    finally:
        close_quietly(client)
    records = []
    for window in windows:
        try:
            records.append(parse_window(window.data))
        except CorruptRecord:
            continue
    hosts = host_of_task((r.task_start, r.task_end, r.host) for r in runs)
    total, used = monitor_inter_host_bytes(records, hosts, start_ms, end_ms)
    found: dict[str, Any] = {"inter_host_bytes_monitor": total, "monitor_windows": used}
    if cluster.hosts is None and total is not None:
        found["inter_host_bytes"] = total
        found["inter_host_bytes_note"] = (
            "loopback cluster: the worker monitor's window records (emit-time traffic between "
            "tasks on different supervisors, bytes estimated from sampled tuple sizes)"
        )
    return found


# --------------------------------------------------------------------------- the session


class _Session:
    """The cluster of the current scheduler class; a new one when the class changes."""

    def __init__(self, settings: Mapping[str, Any], notes: list[str]) -> None:
        self.settings = settings
        self.notes = notes
        self.emulation = settings["emulation"]
        self.cluster: _BenchCluster | None = None
        self.cluster_class: str | None = None
        self.start_seconds: list[float] = []
        self.switch_seconds: list[float] = []
        self.hosts: EmulatedHosts | None = None

    def emu_env(self) -> dict[str, str] | None:
        if self.emulation == "no":
            return None
        env = {k: os.environ[k] for k in EMU_KEYS if os.environ.get(k)}
        for key, value in EMU_DEFAULTS.items():
            env.setdefault(key, value)
        for key in EMU_KEYS:
            if self.settings.get(key.lower()):
                env[key] = str(self.settings[key.lower()])
        return env

    def ensure(self, spec: SchedulerSpec) -> _BenchCluster:
        """The cluster for the next run of ``spec``: the current one, the current one with
        Nimbus restarted for ``spec``'s class, or a new one (``restart``)."""
        if self.settings["restart"] == "run":
            self.close()
        if self.cluster is not None and self.cluster_class == spec.cluster_class:
            return self.cluster
        if self.cluster is not None and self.settings["restart"] == "nimbus":
            started = time.monotonic()
            self.cluster.switch_scheduler(spec, self.settings["ready_timeout"])
            self.switch_seconds.append(time.monotonic() - started)
            self.cluster_class = spec.cluster_class
            return self.cluster
        self.close()
        started = time.monotonic()
        cluster = self._start(spec, self.emu_env())
        if cluster.hosts is None and self.emulation != "no":
            self._loud(
                "cluster-up did not write run/emulated-hosts.json (no EMU_HOSTS support in "
                "deploy/ yet, or the kernel refused): running on the LOOPBACK cluster"
            )
            if self.emulation == "yes":
                cluster.down()
                raise RuntimeError("emulation=yes but the cluster has no emulated hosts")
            self.emulation = "no"
        self.start_seconds.append(time.monotonic() - started)
        cluster.instance = len(self.start_seconds)
        self.hosts = cluster.hosts or self.hosts
        self.cluster, self.cluster_class = cluster, spec.cluster_class
        return cluster

    def _start(self, spec: SchedulerSpec, emulation: dict[str, str] | None) -> _BenchCluster:
        settings = self.settings
        make = lambda emu: _BenchCluster(  # noqa: E731
            settings["cluster_dir"],
            settings["port_offset"],
            spec,
            emu,
            settings["monitor"],
            settings["supervisors"],
            brain=settings["restart"] == "nimbus",
            brain_args=settings["brain_args"],
            compiler=settings["compiler"],
        )
        cluster = make(emulation)
        try:
            cluster.up()
            return cluster
        except RuntimeError as error:
            cluster.down()
            if emulation is None or self.emulation == "yes":
                raise
            self._loud(
                f"cluster-up with {emulation} failed; running on the LOOPBACK cluster "
                f"instead:\n{str(error)[-1500:]}"
            )
            self.emulation = "no"
        cluster = make(None)
        cluster.up()
        return cluster

    def _loud(self, text: str) -> None:
        banner = "!" * 78
        report.line(f"{banner}\nNOTE: {text}\n{banner}")
        self.notes.append(text.splitlines()[0])

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.down()
        self.cluster, self.cluster_class = None, None


# --------------------------------------------------------------------------- benchmark


def _positive_int(extra: Mapping[str, str], key: str) -> int | None:
    if key not in extra:
        return None
    value = extra[key]
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{key} expects a whole number of at least 1, got {value!r}")
    return int(value)


def _warmup_text(settings: Mapping[str, Any]) -> str:
    if settings["steady_warmup"]:
        return (
            f"until the acked rate levels off ({cluster_warmup.SHORTEST_S:g}–"
            f"{cluster_warmup.LONGEST_S:g} s)"
        )
    return f"{settings['warmup']:g} s"


def _settings(options: BenchOptions) -> dict[str, Any]:
    extra, quick = options.extra, options.quick
    known = {
        "topologies", "schedulers", "loadaware", "repetitions", "warmup", "interval",
        "order", "emulation", "monitor", "supervisors", "cluster_dir", "port_offset",
        "ready_timeout", "restart", "workers", "adaptive_algorithm", "adaptive_placed_by",
        "brain_args", "compiler",
        *(k.lower() for k in EMU_KEYS),
    }  # fmt: skip
    unknown = sorted(set(extra) - known)
    if unknown:
        raise ValueError(f"unknown --set key(s) {unknown}: expected some of {sorted(known)}")
    emulation = extra.get("emulation", "auto")
    if emulation not in ("auto", "yes", "no"):
        raise ValueError(f"emulation expects auto, yes or no, got {emulation!r}")
    restart = extra.get("restart", "nimbus")
    if restart not in ("nimbus", "cluster", "run"):
        raise ValueError(f"restart expects nimbus, cluster or run, got {restart!r}")
    compiler = compiler_setting(extra)
    order = extra.get("order", "serpentine")
    if order not in ("serpentine", "cycle"):
        raise ValueError(f"order expects serpentine or cycle, got {order!r}")

    steady_warmup = extra.get("warmup", str(QUICK_WARMUP_S) if quick else cluster_warmup.STEADY)
    steady_warmup = steady_warmup == cluster_warmup.STEADY

    def names(key: str, default: Sequence[str]) -> list[str]:
        return [p.strip() for p in extra.get(key, ",".join(default)).split(",") if p.strip()]

    return {
        "topologies": names("topologies", QUICK_TOPOLOGIES if quick else TOPOLOGIES),
        "schedulers": names("schedulers", QUICK_SCHEDULERS if quick else ALL_SCHEDULERS),
        "loadaware": parse_bool_list(extra.get("loadaware", "on" if quick else "both")),
        "repetitions": int(extra.get("repetitions", QUICK_REPETITIONS if quick else REPETITIONS)),
        "steady_warmup": steady_warmup,
        "warmup": (
            None
            if steady_warmup
            else seconds_setting(extra, "warmup", QUICK_WARMUP_S, allow_zero=True)
        ),
        "interval": seconds_setting(extra, "interval", QUICK_INTERVAL_S if quick else INTERVAL_S),
        "ready_timeout": seconds_setting(extra, "ready_timeout", READY_TIMEOUT_S),
        "serpentine": order == "serpentine",
        "restart": restart,
        "emulation": emulation,
        "monitor": extra.get("monitor", "no").lower() in ("yes", "on", "true", "1"),
        "workers": _positive_int(extra, "workers"),
        "adaptive_algorithm": extra.get("adaptive_algorithm", adaptive.REPLAN_ALGORITHM),
        "adaptive_placed_by": extra.get("adaptive_placed_by", adaptive.PLACED_BY),
        "brain_args": extra.get("brain_args", ""),
        "compiler": compiler,
        "supervisors": extra.get("supervisors"),
        "cluster_dir": Path(extra.get("cluster_dir", REPO / "build" / "bench-cluster")),
        "port_offset": extra.get("port_offset", os.environ.get("CLUSTER_PORT_OFFSET", "3000")),
        **{k.lower(): extra[k.lower()] for k in EMU_KEYS if k.lower() in extra},
    }


def run(options: BenchOptions) -> None:
    began = time.monotonic()
    settings = _settings(options)
    topologies = {label: topology_spec(label) for label in settings["topologies"]}
    order = run_order(
        list(topologies),
        settings["schedulers"],
        settings["loadaware"],
        settings["repetitions"],
        serpentine=settings["serpentine"],
    )
    starts = cluster_starts(order)
    restarts = {"nimbus": 1, "cluster": starts, "run": len(order)}[settings["restart"]]
    starts = max(starts, restarts)
    warmup_estimate = cluster_warmup.TYPICAL_S if settings["steady_warmup"] else settings["warmup"]
    estimate = (
        len(order) * (warmup_estimate + settings["interval"] + RUN_OVERHEAD_S)
        + restarts * CLUSTER_START_S
        + (starts - restarts) * NIMBUS_RESTART_S
    )
    report.title("Cluster benchmark: placement vs Storm's schedulers", PAPER)
    report.line(
        f"{len(order)} runs ({', '.join(topologies)} × {', '.join(settings['schedulers'])} × "
        f"load-aware {'/'.join('on' if v else 'off' for v in settings['loadaware'])} × "
        f"{settings['repetitions']}), {starts} scheduler-class starts (restart: "
        f"{settings['restart']}), warm-up {_warmup_text(settings)}, "
        f"interval {settings['interval']:g} s; workers on {settings['compiler'].upper()}; "
        f"estimated {estimate / 60:.0f} min; "
        f"cluster {settings['cluster_dir']} (port offset {settings['port_offset']}); "
        f"load {os.getloadavg()[0]:.1f}"
    )
    notes: list[str] = []
    runs: list[dict[str, Any]] = []
    session = _Session(settings, notes)
    previous_handler = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        try:
            for index, key in enumerate(order, start=1):
                cluster = session.ensure(scheduler_spec(key.scheduler))
                result = _measure(
                    cluster, key, topologies[key.topology], settings, index, Path(tmp)
                )
                if scheduler_spec(key.scheduler).brain:
                    result["logs"] = _keep_run_logs(cluster, options, index, Path(tmp))
                runs.append(result)
                progress(index, len(order), result, began)
        finally:
            session.close()
            signal.signal(signal.SIGTERM, previous_handler)
    elapsed = time.monotonic() - began
    emulated = bool(runs) and all(r["emulated"] for r in runs)
    rows = summarise(runs)
    tables(rows, settings, emulated)
    hosts_json = _hosts_json(session)
    for result in runs:
        if hosts_json is not None and result.get("placement"):
            result["throughput_model"] = cluster_calibration.predicted_run(result, hosts_json)
    order_checks = default_orders.hosts_check(runs, rows, hosts_json)
    checked = cluster_report.checks_and_targets(
        rows, runs, settings, emulated, options.quick, elapsed, order_checks
    )
    report.line(
        f"\nwall time {elapsed / 60:.1f} min ({len(runs)} runs, {len(session.start_seconds)} "
        f"cluster starts, median {median_text(session.start_seconds)} s; "
        f"{len(session.switch_seconds)} Nimbus-only restarts, median "
        f"{median_text(session.switch_seconds)} s)"
    )
    for note in notes:
        report.line(f"note: {note}")

    png, json_path = report.output_paths(options, NAME)
    report.plot(png, lambda axes: draw(axes, rows, list(topologies)), panels=len(topologies))
    data = report.common_json(options, NAME, PAPER)
    data.update(
        {
            "settings": {k: v for k, v in settings.items()},
            "emulated": emulated,
            "emulated_hosts": hosts_json,
            "notes": notes,
            "duration_s": elapsed,
            "cluster_start_s": session.start_seconds,
            "nimbus_restart_s": session.switch_seconds,
            "order": [
                f"{k.topology}/{k.scheduler}/{'la' if k.loadaware else 'nola'}" for k in order
            ],
            "summary_fields": list(SUMMARY_FIELDS),
            "runs": runs,
            "summary": rows,
            **checked,
        }
    )
    report.write_json(json_path, data)
    report.footer(options, png, json_path)


def _keep_run_logs(
    cluster: _BenchCluster, options: BenchOptions, index: int, scratch: Path
) -> str | None:
    """Copy a brain run's logs — the brain's log, its plan log, the reconfiguration history
    and the aggregation job's log — to ``<output dir>/cluster-logs/run-<index>`` before the
    next run's cluster replaces them, so a run's decisions can be explained afterwards;
    the directory, or ``None`` when nothing was copied."""
    into = options.output_dir / "cluster-logs" / f"run-{index}"
    try:
        kept = cluster.keep_logs(into, [scratch / f"aggregate-{index}.log"])
    except Exception as error:  # keeping logs must not lose the session's runs
        report.line(f"  (run {index}: its logs were not kept: {type(error).__name__}: {error})")
        return None
    return str(into) if kept else None


def _stop_on_sigterm(signum: int, _frame: object) -> None:
    """SIGTERM ends the benchmark through the ``finally`` that stops its cluster (the
    default action would leave Nimbus, the supervisors and the emulated hosts running)."""
    raise SystemExit(f"bench cluster: stopped by signal {signum}; stopping the cluster")


def _hosts_json(session: _Session) -> Any:
    """The emulated hosts the runs used (``emulated-hosts.json``), or ``None``."""
    return None if session.hosts is None else dataclasses.asdict(session.hosts)
