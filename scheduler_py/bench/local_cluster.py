"""A private local Storm cluster for the cluster benchmarks, and heartbeat-aligned rates.

:class:`LocalCluster` runs ``deploy/cluster-up.sh`` / ``cluster-down.sh`` in its own
``CLUSTER_DIR`` and port range (``CLUSTER_PORT_OFFSET``, default 3000), with the brain and
the worker monitor on, and submits, watches and kills topologies through
:class:`~scheduler_py.nimbus.NimbusCtl`; it can start, pause (SIGSTOP) and stop one
``scheduler-py aggregate`` process. :class:`BrainCluster` adds streamparse projects, the
brain's Thrift calls and its reconfiguration history. Used by
:mod:`scheduler_py.bench.monitor_overhead` and :mod:`scheduler_py.bench.reconfig_pause`.

Throughput is read from Nimbus's spout executor stats, which move only when a worker's 5 s
stats heartbeat arrives: :func:`aligned_counts` polls until every spout executor's acked
count has moved once, so a rate over an interval (:func:`step_rate`) is measured between
two heartbeats per executor rather than at arbitrary times.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_py.bench import report
from scheduler_py.bench.checkout import CheckoutMissing, checkout_path
from scheduler_py.bench.registry import BenchOptions, seconds_setting

PORT_OFFSET = "3000"
STEP_TIMEOUT_S = 15.0
"""How long to wait for every spout executor's count to move (3 × the 5 s stats period)."""
POLL_S = 0.5
SPOUT = "sentences"
"""The word count's spout: the default component throughput is read from."""
NIMBUS_TIMEOUT_MS = 30_000
NIMBUS_ATTEMPTS = 3
""":class:`BrainCluster`'s Nimbus queries wait this long and are tried this often: the
unthrottled topologies load the 2-core machine enough that Nimbus now and then answers late."""

C2_CHILDOPTS = "-Xmx%HEAP-MEM%m -XX:+UseSerialGC -XX:+HeapDumpOnOutOfMemoryError"
"""Worker JVM options (``STORM_WORKER_CHILDOPTS``) with the JVM's default tiered compilation
(C2), as operators run it; ``deploy/cluster-up.sh``'s own default adds
``-XX:TieredStopAtLevel=1`` (C1 only), which starts faster and runs slower."""
COMPILERS = ("c2", "c1")
"""``--set compiler=`` of the cluster benchmarks, the default first"""


Sample = tuple[float, Mapping[str, int]]
"""(monotonic seconds, acked count per spout executor)."""


# --------------------------------------------------------------------------- pure helpers


def compiler_setting(extra: Mapping[str, Any]) -> str:
    """``--set compiler=`` of a cluster benchmark (:data:`COMPILERS`, the first by default)."""
    compiler = str(extra.get("compiler", COMPILERS[0])).lower()
    if compiler not in COMPILERS:
        raise ValueError(f"compiler expects {' or '.join(COMPILERS)}, got {compiler!r}")
    return compiler


def worker_childopts(compiler: str) -> str | None:
    """``STORM_WORKER_CHILDOPTS`` for a benchmark's clusters: :data:`C2_CHILDOPTS` for
    ``c2``, ``None`` (cluster-up's C1-only default) for ``c1``."""
    if compiler == "c2":
        return C2_CHILDOPTS
    if compiler == "c1":
        return None
    raise ValueError(f"compiler must be c2 or c1, got {compiler!r}")


def first_steps(samples: Sequence[Sample]) -> dict[str, tuple[float, int]]:
    """For each executor, the time and count of the first sample whose count differs from
    its count in the first sample (the moment a fresh heartbeat reached Nimbus). An
    executor that never moves keeps its last sample (time and count)."""
    if not samples:
        return {}
    _, base = samples[0]
    steps: dict[str, tuple[float, int]] = {}
    for when, counts in samples[1:]:
        for key, count in counts.items():
            if key not in steps and key in base and count != base[key]:
                steps[key] = (when, count)
    last_time, last_counts = samples[-1]
    for key in base:
        if key not in steps and key in last_counts:
            steps[key] = (last_time, last_counts[key])
    return steps


def step_rate(
    start: Mapping[str, tuple[float, int]], end: Mapping[str, tuple[float, int]]
) -> float:
    """Σ over executors of (count_end − count_start) / (t_end − t_start): acked tuples/s."""
    total = 0.0
    for key, (t0, c0) in start.items():
        if key not in end:
            continue
        t1, c1 = end[key]
        if t1 > t0:
            total += (c1 - c0) / (t1 - t0)
    return total


def mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def tree_cpu_seconds(pid: int) -> float:
    """CPU-seconds (user + system) of ``pid`` and its live descendants (Linux ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, stack, tick = 0.0, [pid], os.sysconf("SC_CLK_TCK")
    while stack:
        current = stack.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
        stack += children.get(current, [])
    return total


def median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def value_range(values: Sequence[float | None]) -> str:
    present = [v for v in values if v is not None]
    return f"{min(present):,.1f}–{max(present):,.1f}" if present else "–"


# --------------------------------------------------------------------------- the cluster


class LocalCluster:
    """A local cluster of its own in ``directory`` (cluster-up.sh's ``CLUSTER_DIR``): the
    brain on (``BrainScheduler``), the worker monitor on, the aggregation as asked."""

    def __init__(
        self, directory: Path, aggregate: bool = False, port_offset: str = PORT_OFFSET
    ) -> None:
        """``aggregate``: cluster-up.sh starts the aggregation for the whole session
        (monitor_overhead leaves it off and runs its own with :meth:`start_aggregation`).
        Without the checkout's scripts it raises :class:`CheckoutMissing` before anything runs."""
        checkout_path("deploy/cluster-up.sh")
        self.directory = directory
        self.env = dict(os.environ)
        self.env.update(
            CLUSTER_DIR=str(directory),
            CLUSTER_PORT_OFFSET=port_offset,
            VENV=str(Path(sys.executable).parents[1]),
            BRAIN="yes",
            STORM_SCHEDULER="io.schedulerpy.storm.BrainScheduler",
            AGGREGATE="yes" if aggregate else "no",
            DASHBOARD="no",  # nothing but what is measured shares the CPU
        )
        self.nimbus: Any = None
        self.nimbus_attempts = 1
        self.spouts: dict[str, str] = {}
        """topology name → the spout whose acked counts make its throughput"""
        self.aggregation: subprocess.Popen[bytes] | None = None

    def use_compiler(self, compiler: str) -> None:
        """Start worker JVMs with ``compiler`` (``c2`` or ``c1``, :func:`worker_childopts`):
        ``STORM_WORKER_CHILDOPTS`` for ``c2``, cluster-up's own default for ``c1``."""
        childopts = worker_childopts(compiler)
        if childopts is not None:
            self.env["STORM_WORKER_CHILDOPTS"] = childopts

    def up(self) -> None:
        from scheduler_py.nimbus import NimbusCtl

        result = self._run("cluster-up.sh", timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"cluster-up failed:\n{result.stdout}\n{result.stderr}")
        monitor_wanted = self.env.get("STORM_MONITOR", "yes") != "no"
        if monitor_wanted and "worker monitor on" not in result.stdout + result.stderr:
            report.line("  note: cluster-up did not report the worker monitor on")
        for text in (self.directory / "run" / "cluster.env").read_text().splitlines():
            if "=" in text and not text.startswith("#"):
                key, _, value = text.partition("=")
                self.env[key] = value.strip("'")
        self.env["STORM_NIMBUS"] = f"127.0.0.1:{self.env['STORM_NIMBUS_PORT']}"
        host, port = self.env["STORM_NIMBUS"].split(":")
        self.nimbus = NimbusCtl(host, int(port))

    def down(self) -> None:
        self.stop_aggregation()
        try:
            result = self._run("cluster-down.sh", timeout=180)
        except CheckoutMissing:
            return  # without the scripts up() started nothing: it raised the same error
        if result.returncode != 0:
            report.line(f"  note: cluster-down failed:\n{result.stdout}\n{result.stderr}")

    def start_aggregation(self, every: str, log_path: Path, window: str = "60s") -> int:
        """``scheduler-py aggregate`` with cluster-up.sh's arguments; returns its pid."""
        command = [
            str(Path(sys.executable).with_name("scheduler-py")),
            "aggregate",
            "--every",
            every,
            "--window",
            window,
            "--zookeeper",
            f"{self.env['STORM_ZK_HOST']}:{self.env['STORM_ZK_PORT']}",
            "--nimbus",
            self.env["STORM_NIMBUS"],
        ]
        with log_path.open("ab") as log:
            self.aggregation = subprocess.Popen(
                command,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: paused and resumed whole
            )
        return self.aggregation.pid

    def pause_aggregation(self, paused: bool) -> int | None:
        """SIGSTOP (``paused``) or SIGCONT the aggregation's process group — the Python
        process and its Spark JVM — so it stays warm but costs nothing during other runs;
        returns its pid."""
        process = self.aggregation
        if process is None or process.poll() is not None:
            return None
        os.killpg(process.pid, signal.SIGSTOP if paused else signal.SIGCONT)
        return process.pid

    def stop_aggregation(self) -> None:
        process, self.aggregation = self.aggregation, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGCONT)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)

    def submit(self, name: str, conf: Mapping[str, object]) -> None:
        from scheduler_py.devtools import jvm_topologies

        jvm_topologies.submit("wordcount", name, conf, env=self.env)

    def kill(self, name: str) -> None:
        if not self.nimbus.find_topology_id(name):
            return
        self.nimbus.kill(name, 0)
        deadline = time.monotonic() + 90
        while self.nimbus.find_topology_id(name) and time.monotonic() < deadline:
            time.sleep(1)
        # the workers exit ~10 s after Nimbus forgets the topology: wait for free slots
        while time.monotonic() < deadline:
            supervisors = self.nimbus.cluster_summary()["supervisors"]
            if all(s["used_slots"] == 0 for s in supervisors):
                break
            time.sleep(1)

    @property
    def brain(self) -> str:
        return f"{self.env.get('BRAIN_HOST', '127.0.0.1')}:{self.env['BRAIN_PORT']}"

    def brain_call(self, method: str, *args: Any, timeout_ms: int = 60_000) -> Any:
        from scheduler_py.service.client import call_brain

        return call_brain(self.brain, method, *args, timeout_ms=timeout_ms)

    def keep_logs(self, into: Path, extra: Iterable[Path] = ()) -> list[Path]:
        """Copy the brain's log, its plan log, the history journals and ``extra`` files to
        ``into`` (the last :data:`KEPT_LOG_BYTES` of each); return what was copied."""
        copied = []
        logs = self.directory / "logs"
        sources = [logs / "brain.log", logs / "brain-plans.jsonl", *extra]
        state_dir = self.env.get("BRAIN_STATE_DIR")
        if state_dir:
            sources += sorted((Path(state_dir) / "history").glob("*.jsonl"))
        for source in sources:
            if source.is_file():
                into.mkdir(parents=True, exist_ok=True)
                copied.append(_copy_tail(source, into / source.name, KEPT_LOG_BYTES))
        return copied

    def history(self, name: str) -> list[dict[str, Any]]:
        state_dir = self.env.get("BRAIN_STATE_DIR")
        if state_dir:
            from scheduler_py.reconfig.history import History

            return History(Path(state_dir)).entries(name)
        return json.loads(self.brain_call("history", name))

    def spout_counts(self, name: str) -> dict[str, int]:
        """Acked count per spout executor of ``name`` (the spout named at submit, else
        :data:`SPOUT`), keyed ``tasks@host:port``."""
        component = self.spouts.get(name, SPOUT)
        return {
            f"{r.task_start}-{r.task_end}@{r.host}:{r.port}": r.acked
            for r in self._nimbus("executor_runs", name)
            if r.component == component
        }

    def _nimbus(self, method: str, *args: Any) -> Any:
        """``self.nimbus.<method>(*args)``, tried again after a timeout or a lost connection
        up to :attr:`nimbus_attempts` times in all."""
        from thriftpy2.transport import TTransportException

        for attempt in range(1, self.nimbus_attempts + 1):
            try:
                return getattr(self.nimbus, method)(*args)
            except (OSError, TTransportException) as error:
                if attempt == self.nimbus_attempts:
                    raise
                say(f"  nimbus {method}: {type(error).__name__}: {error}; trying again")
                time.sleep(1.0)
        raise AssertionError("unreachable")

    def _run(self, script: str, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(checkout_path(f"deploy/{script}"))],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


class BrainCluster(LocalCluster):
    """A :class:`LocalCluster` for any streamparse project, with the brain's controls
    (replan, history) and Nimbus queries tried again (the unthrottled topologies load the
    2-core machine enough that Nimbus now and then answers late)."""

    def __init__(self, directory: Path, aggregate: bool, port_offset: str = PORT_OFFSET) -> None:
        super().__init__(directory, aggregate, port_offset)
        self.nimbus_attempts = NIMBUS_ATTEMPTS

    def up(self) -> None:
        super().up()
        self.nimbus.timeout_ms = NIMBUS_TIMEOUT_MS

    def submit_project(
        self, project: str, topology: str, spout: str, options: Sequence[str]
    ) -> None:
        """Submit the streamparse ``project`` (under ``topologies/``) as ``topology`` with
        ``-o`` conf ``options``; ``spout`` is the component its throughput is read from."""
        self.spouts[topology] = spout
        args = [str(checkout_path("deploy/submit-topology.sh")), project, topology]
        args += ["--wait=100"]
        for option in options:
            args += ["-o", option]
        result = subprocess.run(
            args, env=self.env, capture_output=True, text=True, timeout=400, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"submit {topology} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
            )

    def workers(self, name: str) -> int | None:
        state = self._nimbus("topology_state", name)
        return len(state.workers) if state is not None else None

    def status(self, name: str) -> str | None:
        return self._nimbus("status", name)


KEPT_LOG_BYTES = 4 << 20
"""the most of one log :meth:`LocalCluster.keep_logs` copies (its end)"""


def _copy_tail(source: Path, target: Path, limit: int) -> Path:
    """Copy ``source`` to ``target``, only its last ``limit`` bytes when it is longer."""
    size = source.stat().st_size
    if size <= limit:
        return Path(shutil.copy2(source, target))
    with source.open("rb") as reading, target.open("wb") as writing:
        reading.seek(size - limit)
        writing.write(reading.read(limit))
    return target


# --------------------------------------------------------------------------- measuring


def aligned_counts(cluster: LocalCluster, name: str) -> dict[str, tuple[float, int]]:
    """Poll until every spout executor's acked count has moved once (a fresh heartbeat)."""
    samples: list[Sample] = [(time.monotonic(), cluster.spout_counts(name))]
    deadline = samples[0][0] + STEP_TIMEOUT_S
    while time.monotonic() < deadline:
        time.sleep(POLL_S)
        samples.append((time.monotonic(), cluster.spout_counts(name)))
        steps = first_steps(samples)
        base = samples[0][1]
        if all(steps[k][1] != base[k] for k in base):
            break
    return first_steps(samples)


def rate_over(cluster: LocalCluster, name: str, interval: float) -> tuple[float, float | None]:
    """Spout-acked tuples/s over ``interval`` (heartbeat-aligned) and the mean span (s)."""
    start = aligned_counts(cluster, name)
    time.sleep(interval)
    end = aligned_counts(cluster, name)
    spans = [end[k][0] - start[k][0] for k in start if k in end]
    return step_rate(start, end), mean(spans)


@dataclass(frozen=True)
class Timing:
    """A cluster benchmark's defaults: warm-up and measured interval in seconds, each a
    ``(quick, full)`` pair, and the algorithm it is about."""

    warmup: tuple[float, float]
    interval: tuple[float, float]
    algorithm: str

    def settings(self, options: BenchOptions) -> dict[str, Any]:
        """``warmup``, ``interval`` and ``algorithm`` for this run; ``--set`` overrides each."""
        extra, pick = options.extra, 0 if options.quick else 1
        return {
            "warmup": seconds_setting(extra, "warmup", self.warmup[pick], allow_zero=True),
            "interval": seconds_setting(extra, "interval", self.interval[pick]),
            "algorithm": extra.get("algorithm", self.algorithm),
        }


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def load_text() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
