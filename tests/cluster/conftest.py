"""A real local Storm cluster (ZooKeeper, Nimbus, 3 supervisors, the brain) for the
integration tests, started once per session in its own directory and port range, and
always stopped at the end."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from scheduler_py.devtools.storm_daemon import start_daemon, start_zookeeper
from scheduler_py.nimbus import NimbusCtl

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


@dataclass
class Cluster:
    directory: Path
    env: dict[str, str]
    nimbus: NimbusCtl

    @property
    def brain_port(self) -> int:
        return int(self.env["BRAIN_PORT"])

    @property
    def plan_log(self) -> Path:
        return self.directory / "logs" / "brain-plans.jsonl"

    @property
    def brain_pidfile(self) -> Path:
        return self.directory / "run" / "brain.pid"

    def submit(self, name: str, *options: str, wait_acked: int = 1) -> str:
        """Submit word count as ``name`` with streamparse's ``sparse submit``; return its id."""
        args = [str(DEPLOY / "submit-topology.sh"), "wordcount", name, f"--wait={wait_acked}"]
        for option in options:
            args += ["-o", option]
        result = subprocess.run(
            args, env=self.env, capture_output=True, text=True, timeout=400, check=False
        )
        assert result.returncode == 0, f"submit failed:\n{result.stdout}\n{result.stderr}"
        topology_id = self.nimbus.find_topology_id(name)
        assert topology_id, f"{name} not listed after submit"
        return topology_id

    def kill(self, name: str) -> None:
        if self.nimbus.find_topology_id(name):
            self.nimbus.kill(name, 0)
            deadline = time.monotonic() + 60
            while self.nimbus.find_topology_id(name) and time.monotonic() < deadline:
                time.sleep(1)

    # -- Storm's daemons -----------------------------------------------------------------
    def crash(self, component: str) -> None:
        """SIGKILL ``component`` (``nimbus``, ``zookeeper``…) with its process group, as a
        crash would (deploy/cluster-up.sh starts each daemon in its own session), and wait
        until it is gone."""
        pid = int((self.directory / "run" / f"{component}.pid").read_text().strip())
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while _alive(pid):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{component} (pid {pid}) still alive 30 s after SIGKILL")
            time.sleep(0.1)

    def start_nimbus(self) -> subprocess.Popen[bytes]:
        """Start Nimbus again as deploy/cluster-up.sh does (same conf, state, logs, pid file)."""
        return start_daemon(self.directory, self.env, "nimbus", "nimbus")

    def start_zookeeper(self) -> subprocess.Popen[bytes]:
        """Start ZooKeeper again as deploy/cluster-up.sh does (same data directory)."""
        return start_zookeeper(self.directory, self.env)

    # -- the brain process ------------------------------------------------------------
    def kill_brain(self) -> None:
        """SIGKILL the brain, as a crash would."""
        self.stop_brain(signal.SIGKILL)

    def stop_brain(self, how: signal.Signals = signal.SIGTERM) -> None:
        if not self.brain_pidfile.exists():
            return
        pid = int(self.brain_pidfile.read_text().strip() or 0)
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, how)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.2)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.brain_pidfile.unlink(missing_ok=True)
        _wait_port_closed(self.brain_port)

    @property
    def brain_state_dir(self) -> Path:
        return Path(self.env["BRAIN_STATE_DIR"])

    def brain_command(self, *extra: str) -> tuple[str, ...]:
        """The real brain as deploy/cluster-up.sh starts it, plus ``extra`` arguments."""
        return (
            str(Path(sys.executable).with_name("scheduler-py")),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.brain_port),
            "--log-file",
            str(self.directory / "logs" / "brain.log"),
            "--plan-log",
            str(self.plan_log),
            "--zookeeper",
            f"{self.env['STORM_ZK_HOST']}:{self.env['STORM_ZK_PORT']}",
            "--nimbus",
            self.env["STORM_NIMBUS"],
            "--state-dir",
            str(self.brain_state_dir),
            *extra,
        )

    def start_brain(self, *command: str, kill: bool = False) -> None:
        """Start ``command`` (default: the real brain) as this cluster's brain process;
        ``kill`` stops the running one with SIGKILL (no clean shutdown) first."""
        if kill:
            self.kill_brain()
        self.stop_brain()
        if not command:
            command = self.brain_command()
        log = (self.directory / "logs" / "brain-restarts.log").open("a")
        # the key Nimbus seals its rounds with (deploy/cluster-up.sh), for any `serve`
        env = {**os.environ, "SCHEDULER_PY_SHIM_KEY_FILE": self.env["BRAIN_KEY_FILE"]}
        process = subprocess.Popen(
            command,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
        self.brain_pidfile.write_text(f"{process.pid}\n")
        _wait_port_open(self.brain_port)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return True


def _wait_port_open(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def _wait_port_closed(port: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return
        time.sleep(0.2)
    raise TimeoutError(f"127.0.0.1:{port} still open after {timeout}s")


def _read_env(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key] = value.strip("'")
    return values


@contextlib.contextmanager
def start_cluster(directory: Path, **settings: str):
    """A cluster started by deploy/cluster-up.sh in ``directory`` with the test defaults
    (the real brain, no periodic aggregation) and ``settings`` (environment variables of
    the deploy scripts, e.g. ``EMU_HOSTS="4"``), stopped again by deploy/cluster-down.sh."""
    env = dict(os.environ)
    env.update(
        CLUSTER_DIR=str(directory),
        CLUSTER_PORT_OFFSET=os.environ.get("TEST_CLUSTER_PORT_OFFSET", "1000"),
        VENV=str(Path(sys.executable).parents[1]),
        BRAIN="yes",
        # the tests run `scheduler-py aggregate` themselves, at the moments they check
        AGGREGATE="no",
        STORM_SCHEDULER="io.schedulerpy.storm.BrainScheduler",
    )
    env.update(settings)
    up = subprocess.run(
        [str(DEPLOY / "cluster-up.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    try:
        assert up.returncode == 0, f"cluster-up failed:\n{up.stdout}\n{up.stderr}"
        env.update(_read_env(directory / "run" / "cluster.env"))
        host, port = env["STORM_NIMBUS"].split(":")
        yield Cluster(directory, env, NimbusCtl(host, int(port)))
    finally:
        down = subprocess.run(
            [str(DEPLOY / "cluster-down.sh")],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert down.returncode == 0, f"cluster-down left processes:\n{down.stdout}\n{down.stderr}"


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    with start_cluster(tmp_path_factory.mktemp("storm-cluster")) as started:
        yield started
