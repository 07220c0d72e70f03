"""The quick install of docs/install.md ("On your own Storm 2.8 cluster") from the release
artifacts alone: a fresh venv gets only the runtime wheel (built as ``make dist`` builds it,
deploy/dist-python.sh), a copy of the Storm home gets only the versioned shim jar in
``extlib-daemon/`` and a ``storm.yaml`` holding the doc's lines (with this test's ports and
paths in place of the operator's), the brain is started with the doc's ``scheduler-py serve``
command, read from docs/install.md itself, and a JVM word count is placed by the brain.

Not covered yet: the re-placement after a load change (it needs the worker monitor and the
aggregation, ``[spark]``, in the fresh venv)."""

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
from pathlib import Path

import pytest

import scheduler_py
from scheduler_py.devtools.jvm_topologies import ensure_jar, storm_jar_command
from scheduler_py.nimbus import NimbusCtl
from tests.cluster.waiting import machine_timeout, wait_until

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
INSTALL_MD = REPO / "docs" / "install.md"
PLUGIN_JAR = REPO / "storm_plugin" / "target" / "storm-scheduler-plugin.jar"
STORM_HOME = REPO / "build" / "storm-home"
# apart from the other cluster tests' ports (TEST_CLUSTER_PORT_OFFSET, default 1000)
OFFSET = 7000
ZK_PORT, NIMBUS_PORT, BRAIN_PORT = 2181 + OFFSET, 6627 + OFFSET, 9627 + OFFSET
SLOTS = [6700 + OFFSET, 6701 + OFFSET, 6702 + OFFSET]
NAME = "install-wc"


def quick_install() -> str:
    """The section "On your own Storm 2.8 cluster" of docs/install.md."""
    text = INSTALL_MD.read_text()
    return text.split("## On your own Storm 2.8 cluster", 1)[1].split("\n## ", 1)[0]


def doc_storm_yaml() -> str:
    """The section's ``storm.yaml`` lines (its one yaml block)."""
    return re.search(r"```yaml\n(.*?)\n```", quick_install(), re.S).group(1)


def doc_serve_command() -> list[str]:
    """The section's ``scheduler-py serve …`` command, as words."""
    command = re.search(r"`(scheduler-py serve [^`]*)`", quick_install()).group(1)
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

    def start(self, name: str, args: list[str]) -> None:
        with (self.logs / f"{name}.out").open("ab") as out:
            process = subprocess.Popen(
                args,
                env=self.env,
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
    _run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], env=clean, timeout=600)
    # a copy of the Storm home with only the built jar in extlib-daemon/
    storm_home = work / "storm"
    shutil.copytree(STORM_HOME, storm_home, symlinks=True)
    for old in (storm_home / "extlib-daemon").glob("*.jar"):
        old.unlink()
    shutil.copy(jar, storm_home / "extlib-daemon" / jar.name)
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
    # the doc's lines, the operator's values (port, key path) filled in, and this host's
    (storm_home / "conf" / "storm.yaml").write_text(
        doc_storm_yaml()
        .replace("scheduler.brain.port: 9627", f"scheduler.brain.port: {BRAIN_PORT}")
        .replace("/path/to/shim.key", str(key))
        + "\n"
        + "\n".join(
            [
                'storm.zookeeper.servers: ["127.0.0.1"]',
                f"storm.zookeeper.port: {ZK_PORT}",
                'nimbus.seeds: ["127.0.0.1"]',
                f"nimbus.thrift.port: {NIMBUS_PORT}",
                f"supervisor.thrift.port: {NIMBUS_PORT + 1}",
                f"supervisor.slots.ports: {SLOTS}",
                f'storm.local.dir: "{work / "local"}"',
                'storm.local.hostname: "127.0.0.1"',
                f'dev.zookeeper.path: "{work / "zookeeper"}"',
            ]
        )
        + "\n"
    )
    serve = [
        word.replace("$STORM_HOME", str(storm_home)).replace("/var/log/storm", str(logs))
        for word in doc_serve_command()
    ]
    serve = [str(venv / "bin" / serve[0]), *serve[1:], "--port", str(BRAIN_PORT)]
    processes = Processes(env, work, logs)
    storm = str(storm_home / "bin" / "storm")
    try:
        processes.start("zookeeper", [storm, "dev-zookeeper"])
        processes.start("brain", serve)
        wait_until(key.exists, machine_timeout(60), f"the brain to create its shim key {key}")
        processes.start("nimbus", [storm, "nimbus"])
        processes.start("supervisor", [storm, "supervisor"])
        yield {"env": env, "venv": venv, "work": work, "logs": logs, "storm_home": storm_home}
    finally:
        processes.stop_all()
        shutil.rmtree(work, ignore_errors=True)


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

    wait_until(supervisors, machine_timeout(120), "the supervisor to register with Nimbus")
    command = storm_jar_command("wordcount", NAME, {}, installed["storm_home"], ensure_jar())
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
