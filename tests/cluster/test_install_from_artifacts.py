"""The quick install of docs/install.md ("On your own Storm 2.8 cluster") from the release
artifacts alone: a fresh venv gets only the runtime wheel with its ``[spark]`` extra (built as
``make dist`` builds it, deploy/dist-python.sh), a copy of the Storm home gets only the
versioned shim jar in ``extlib-daemon/`` (Nimbus) and ``extlib/`` (the workers) and a
``storm.yaml`` holding the doc's lines (with this test's ports and paths in place of the
operator's), the brain and the aggregation are started with the doc's ``scheduler-py serve``
and ``scheduler-py aggregate`` commands, read from docs/install.md itself, and a JVM word count
is placed by the brain on two supervisors, measured by the worker monitor (``scheduler-py
metrics`` from the fresh venv shows its aggregate) and, after its load drops (its split bolts'
CPU per tuple, changed at run time through ``bench.control.file``), re-placed by the brain's
reconfiguration controller through Nimbus (``scheduler-py history`` from the fresh venv shows
the completed reconfiguration).

The Storm daemons are started with this repository's launcher (``build/storm-home/bin/storm``)
as ``make storm-home`` assembles it, not with Storm's own ``bin/storm.py``; both run the same
main classes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import scheduler_py
from scheduler_py.devtools.jvm_topologies import ensure_jar, storm_jar_command
from scheduler_py.nimbus import NimbusCtl
from scheduler_py.reconfig.history import TERMINAL
from tests.cluster.waiting import machine_timeout, wait_until

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
INSTALL_MD = REPO / "docs" / "install.md"
PLUGIN_JAR = REPO / "storm_plugin" / "target" / "storm-scheduler-plugin.jar"
STORM_HOME = REPO / "build" / "storm-home"
# apart from the other cluster tests' ports (TEST_CLUSTER_PORT_OFFSET, default 1000)
OFFSET = 7000
ZK_PORT, NIMBUS_PORT, BRAIN_PORT = 2181 + OFFSET, 6627 + OFFSET, 9627 + OFFSET
# two supervisors, as two hosts: (hostname, slot ports, supervisor thrift port)
SUPERVISORS = [
    ("127.0.0.1", [6700 + OFFSET, 6701 + OFFSET, 6702 + OFFSET], NIMBUS_PORT + 1),
    ("127.0.0.2", [6710 + OFFSET, 6711 + OFFSET, 6712 + OFFSET], NIMBUS_PORT + 2),
]
NAME = "install-wc"
HEAVY_SPLIT_MICROS = 80_000
# The story of tests/cluster/test_reconfiguration.py with the JVM word count: split bolts
# that cost 80 ms of CPU per sentence at 5 sentences/s, placed round-robin (`even`) over both
# supervisors; the change trigger alone may re-plan (no one-off re-plan on the first
# measurements), over 4 aggregates 5 s apart, at the shipped θ.
STORY_CONF: dict[str, object] = {
    "topology.workers": 2,
    "topology.max.spout.pending": 50,
    "topology.disable.loadaware.messaging": True,
    "bench.spout.rate": 5,
    "bench.cpu.micros.split": HEAVY_SPLIT_MICROS,
    # declared CPU points per executor (the default 50/20 exceed two hosts capped at 60 %)
    "bench.cpu.load": 5,
    "scheduler.brain.algorithm": "even",
    # room for the heavy load on either host whichever executors even puts together, so only
    # the load drop (the change trigger), never an overload, re-plans it
    "scheduler.brain.node.cpu.cap": 90,
    "scheduler.reconfig.change.windows": 4,
    "scheduler.reconfig.warmup.secs": 15,
    "scheduler.reconfig.replan.on.measured": False,
    "scheduler.reconfig.cooldown.secs": 40,
}


def quick_install() -> str:
    """The section "On your own Storm 2.8 cluster" of docs/install.md."""
    text = INSTALL_MD.read_text()
    return text.split("## On your own Storm 2.8 cluster", 1)[1].split("\n## ", 1)[0]


def doc_yaml_blocks() -> list[str]:
    """The section's ``storm.yaml`` blocks: Nimbus's lines (step 3), the monitor's (step 5)."""
    blocks = re.findall(r"```yaml\n(.*?)\n```", quick_install(), re.S)
    assert len(blocks) == 2, f"expected Nimbus's and the monitor's yaml blocks, found {blocks}"
    return blocks


def doc_command(subcommand: str) -> list[str]:
    """The section's ``scheduler-py <subcommand> …`` command, as words."""
    command = re.search(rf"`(scheduler-py {subcommand} [^`]*)`", quick_install()).group(1)
    return shlex.split(command)


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result


class Processes:
    """The daemons this test starts, each in a session of its own, stopped (process group,
    SIGTERM, then SIGKILL) at the end."""

    def __init__(self, env: dict[str, str], cwd: Path, logs: Path):
        self.env, self.cwd, self.logs = env, cwd, logs
        self.started: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, args: list[str], extra_env: dict[str, str] | None = None) -> None:
        with (self.logs / f"{name}.out").open("ab") as out:
            process = subprocess.Popen(
                args,
                env={**self.env, **(extra_env or {})},
                cwd=self.cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started.append((name, process))

    def stop_all(self) -> None:
        for _, process in reversed(self.started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for _, process in reversed(self.started):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
            # the supervisor's workers are in its process group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    assert (STORM_HOME / "RELEASE").exists(), f"no Storm home in {STORM_HOME}: make storm-home"
    assert PLUGIN_JAR.exists(), f"{PLUGIN_JAR} missing: make plugin"
    work = tmp_path_factory.mktemp("install")
    version = scheduler_py.__version__
    # the artifacts, as `make dist` builds them
    dist = work / "dist"
    _run(
        [str(REPO / "deploy" / "dist-python.sh"), str(dist)],
        cwd=REPO,
        env={**os.environ, "PY": sys.executable, "PYTHON_BUILD_ARGS": "--no-isolation"},
        timeout=600,
    )
    wheel = dist / f"scheduler_py-{version}-py3-none-any.whl"
    jar = dist / f"storm-scheduler-py-{version}.jar"
    shutil.copy(PLUGIN_JAR, jar)
    # a fresh venv with only the wheel (pip fetches its declared dependencies)
    venv = work / "venv"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run([sys.executable, "-m", "venv", str(venv)], env=clean, timeout=120)
    _run([str(venv / "bin" / "pip"), "install", "-q", f"{wheel}[spark]"], env=clean, timeout=900)
    # a copy of the Storm home with only the built jar in extlib-daemon/ and extlib/
    storm_home = work / "storm"
    shutil.copytree(STORM_HOME, storm_home, symlinks=True)
    for folder in ("extlib-daemon", "extlib"):
        (storm_home / folder).mkdir(exist_ok=True)
        for old in (storm_home / folder).glob("*.jar"):
            old.unlink()
        shutil.copy(jar, storm_home / folder / jar.name)
    home, logs = work / "home", work / "logs"
    home.mkdir()
    logs.mkdir()
    env = {
        **clean,
        "HOME": str(home),
        "PATH": f"{venv}/bin:{clean.get('PATH', '/usr/bin:/bin')}",
        "STORM_HOME": str(storm_home),
        "STORM_CONF_DIR": str(storm_home / "conf"),
    }
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("SCHEDULER_PY_SHIM_KEY_FILE", None)
    key = home / ".config" / "scheduler-py" / "shim.key"

    # the doc's lines, the operator's values (port, key path) filled in, and each host's
    nimbus_lines, monitor_lines = doc_yaml_blocks()

    def storm_yaml(host: str, slots: list[int], supervisor_port: int) -> str:
        return (
            nimbus_lines.replace(
                "scheduler.brain.port: 9627", f"scheduler.brain.port: {BRAIN_PORT}"
            ).replace("/path/to/shim.key", str(key))
            + "\n"
            + monitor_lines
            + "\n"
            # this test's: a window of 5 s instead of 10 s, so aggregates come sooner
            + "scheduler.monitor.window.secs: 5\n"
            + "\n".join(
                [
                    'storm.zookeeper.servers: ["127.0.0.1"]',
                    f"storm.zookeeper.port: {ZK_PORT}",
                    'nimbus.seeds: ["127.0.0.1"]',
                    f"nimbus.thrift.port: {NIMBUS_PORT}",
                    f"supervisor.thrift.port: {supervisor_port}",
                    f"supervisor.slots.ports: {slots}",
                    f'storm.local.dir: "{work / "local" / host}"',
                    f'storm.local.hostname: "{host}"',
                    f'dev.zookeeper.path: "{work / "zookeeper"}"',
                ]
            )
            + "\n"
        )

    (storm_home / "conf" / "storm.yaml").write_text(storm_yaml(*SUPERVISORS[0]))
    second_conf = work / "conf-second-host"
    second_conf.mkdir()
    (second_conf / "storm.yaml").write_text(storm_yaml(*SUPERVISORS[1]))

    def as_here(words: list[str]) -> list[str]:
        """A doc command with this test's venv, Storm home and log directory."""
        here = [
            w.replace("$STORM_HOME", str(storm_home)).replace("/var/log/storm", str(logs))
            for w in words
        ]
        return [str(venv / "bin" / here[0]), *here[1:]]

    serve = [*as_here(doc_command("serve")), "--port", str(BRAIN_PORT)]
    # the doc's aggregation, every 5 s instead of every 30 s
    aggregate = ["5s" if word == "30s" else word for word in as_here(doc_command("aggregate"))]
    aggregate += ["--log-file", str(logs / "aggregate.log")]
    processes = Processes(env, work, logs)
    storm = str(storm_home / "bin" / "storm")
    try:
        processes.start("zookeeper", [storm, "dev-zookeeper"])
        processes.start("brain", serve)
        wait_until(key.exists, machine_timeout(60), f"the brain to create its shim key {key}")
        processes.start("nimbus", [storm, "nimbus"])
        processes.start("supervisor", [storm, "supervisor"])
        second = {
            "STORM_CONF_DIR": str(second_conf),
            "STORM_SUPERVISOR_LOG_FILE": "supervisor-2.log",
        }
        processes.start("supervisor-2", [storm, "supervisor"], extra_env=second)
        processes.start("aggregate", aggregate)
        yield {
            "env": env,
            "venv": venv,
            "work": work,
            "logs": logs,
            "storm_home": storm_home,
            "control": work / "control.properties",
        }
    finally:
        processes.stop_all()
        # the logs stay (pytest keeps its last three base temp dirs); the rest is ~1 GB
        if (storm_home / "logs").is_dir():
            shutil.copytree(storm_home / "logs", logs / "storm", dirs_exist_ok=True)
        for bulky in (venv, storm_home, dist, work / "local", work / "zookeeper"):
            shutil.rmtree(bulky, ignore_errors=True)


def test_the_brain_runs_from_the_wheel_alone(installed):
    out = _run(
        [
            str(installed["venv"] / "bin" / "python"),
            "-c",
            "import scheduler_py; print(scheduler_py.__file__)",
        ],
        cwd=installed["work"],
        env=installed["env"],
        timeout=60,
    ).stdout.strip()
    assert out.startswith(str(installed["venv"])), out


def test_word_count_is_placed_by_the_brain(installed):
    nimbus = NimbusCtl("127.0.0.1", NIMBUS_PORT)

    def supervisors() -> int:
        try:
            return len(nimbus.cluster_summary()["supervisors"])
        except Exception:  # Nimbus is still starting
            return 0

    wait_until(
        lambda: supervisors() == len(SUPERVISORS),
        machine_timeout(120),
        f"{len(SUPERVISORS)} supervisors to register with Nimbus",
    )
    conf = {**STORY_CONF, "bench.control.file": str(installed["control"])}
    command = storm_jar_command("wordcount", NAME, conf, installed["storm_home"], ensure_jar())
    _run(command, env=installed["env"], cwd=installed["work"], timeout=300)
    plan_log = installed["logs"] / "brain-plans.jsonl"

    def placed() -> bool:
        if not plan_log.exists():
            return False
        entries = [json.loads(line) for line in plan_log.read_text().splitlines() if line]
        return any(
            e.get("decision") == "PLACE" and str(e.get("topology_id", "")).startswith(NAME)
            for e in entries
        )

    nimbus_log = installed["storm_home"] / "logs" / "nimbus.log"
    wait_until(
        placed,
        machine_timeout(120),
        f"a PLACE decision for {NAME} in the brain's plan log {plan_log}",
        lambda: (
            "; Nimbus: "
            + " | ".join(
                line[-300:]
                for line in nimbus_log.read_text(errors="replace").splitlines()
                if "STATUS" in line
            )[-600:]
        ),
    )


def test_word_count_is_measured_by_the_worker_monitor(installed):
    """Step 5 of the doc: the jar in extlib/ and the monitor's lines give every worker the
    monitor; the doc's aggregation turns its records into the aggregate the brain plans with."""
    wait = machine_timeout(240)
    shown = _scheduler_py(
        installed, "metrics", NAME, "--wait", f"{wait:.0f}s", "--min-windows", "2",
        timeout=wait + 60,
    )  # fmt: skip
    assert "split" in shown and "count" in shown, shown


def _scheduler_py(installed, *args: str, timeout: float = 120) -> str:
    """Run the fresh venv's ``scheduler-py`` as an operator would (storm.yaml from
    ``$STORM_CONF_DIR``); its standard output."""
    command = [str(installed["venv"] / "bin" / "scheduler-py"), *args]
    return _run(command, cwd=installed["work"], env=installed["env"], timeout=timeout).stdout


def _placement(nimbus: NimbusCtl) -> set[tuple[int, int, str, int]]:
    return {(r.task_start, r.task_end, r.host, r.port) for r in nimbus.executor_runs(NAME)}


def test_load_drop_re_places_word_count(installed):
    """The product's point from the artifacts alone: the controller sees the split bolts'
    load drop in the measured costs and re-places the running topology through Nimbus."""
    nimbus = NimbusCtl("127.0.0.1", NIMBUS_PORT)
    topology_id = nimbus.find_topology_id(NAME)
    before = _placement(nimbus)
    assert len({host for _, _, host, _ in before}) == 2, f"even should use both hosts: {before}"
    brain_out = installed["logs"] / "brain.out"
    # the controller takes the first aggregate after its warm-up as the change reference
    wait_until(
        lambda: "change reference reset" in brain_out.read_text(errors="replace"),
        machine_timeout(240),
        f"the brain to take {NAME}'s change reference (its log {brain_out})",
    )
    # two more aggregates of the heavy load, so the drop is a change against them
    now_ms = int(time.time() * 1000)
    wait = machine_timeout(120)
    _scheduler_py(
        installed, "metrics", NAME, "--wait", f"{wait:.0f}s", "--computed-after-ms",
        str(now_ms + 10_000), timeout=wait + 60,
    )  # fmt: skip
    early = _history(installed, topology_id)
    assert early == [], "re-planned before the load changed: " + repr(
        [
            (e.get("state"), e.get("trigger"), e.get("trigger_detail"), e.get("reason"))
            for e in early
        ]
    )
    control = installed["control"]
    control.with_suffix(".tmp").write_text("bench.cpu.micros.split=0\n")
    control.with_suffix(".tmp").replace(control)

    def decided() -> list[dict]:
        entries = _history(installed, topology_id)
        return entries if entries and entries[-1].get("state") in TERMINAL else []

    entries = wait_until(
        decided,
        machine_timeout(300),
        f"a reconfiguration decision on {NAME} (scheduler-py history)",
        lambda: f"; history: {_history(installed, topology_id)}",
    )
    assert [e["state"] for e in entries] == ["completed"], [
        (e["state"], e.get("trigger_detail"), e.get("reason")) for e in entries
    ]
    entry = entries[0]
    assert entry["trigger"] == "change", entry
    numbers = entry["numbers"]
    assert numbers["interworker_after"] < numbers["interworker_before"], numbers
    after = _placement(nimbus)
    assert after != before
    planned = {(p[0], p[1], p[4]) for p in entry["storm_placement"]}
    assert {(start, end, port) for start, end, _, port in after} == planned
    assert nimbus.status(NAME) == "ACTIVE"


def _history(installed, topology_id: str) -> list[dict]:
    """``scheduler-py history NAME --json`` from the fresh venv: the decisions about this
    submission of the topology, oldest first. The brain keeps its history in its default
    state directory (``/var/lib/scheduler-py`` as root), which outlives this test's work
    directory, so the entries of earlier runs' topologies of the same name are left out."""
    document = json.loads(_scheduler_py(installed, "history", NAME, "--json"))
    entries = document if isinstance(document, list) else document.get("entries", [])
    return [e for e in entries if e.get("topology_id") == topology_id]
