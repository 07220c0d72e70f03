"""``scheduler-py aggregate --master spark://…`` on a real Spark standalone cluster.

``deploy/spark-up.sh`` starts a master and a worker (the pyspark package's own
``spark-class``) on free loopback ports; the same window records, published to a real
ZooKeeper under two roots, are aggregated once with ``--master local[*]`` and once on the
standalone cluster (each run is a ``scheduler-py aggregate`` process: a process has only
one SparkSession), and every aggregate document must be the same.  The cluster is always
stopped again with ``deploy/spark-down.sh``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from scheduler_py.devtools.zkserver import free_port
from scheduler_py.monitoring.records import encode, record_document
from scheduler_py.monitoring.zk import MonitorStore, connect
from tests.cluster.waiting import wait_until
from tests.test_monitoring_zk import publish_wordcount, window

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
SCHEDULER_PY = str(Path(sys.executable).with_name("scheduler-py"))
# a busy 2-core machine starts the driver and executor JVMs slowly
SLOWDOWN = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
RUN_TIMEOUT = 300 * SLOWDOWN

if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip(
        "no java on PATH and JAVA_HOME unset: Spark needs Java 17+", allow_module_level=True
    )
if importlib.util.find_spec("pyspark") is None:
    pytest.skip(
        "pyspark is not installed: pip install -e '.[spark]' (make venv does)",
        allow_module_level=True,
    )


class Standalone:
    """The cluster deploy/spark-up.sh started (its settings, as the scripts use them)."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.ports = {
            name: free_port()
            for name in (
                "SPARK_MASTER_PORT",
                "SPARK_MASTER_WEBUI_PORT",
                "SPARK_WORKER_PORT",
                "SPARK_WORKER_WEBUI_PORT",
            )
        }
        self.env = dict(
            os.environ, SPARK_STATE_DIR=str(state), VENV=str(Path(sys.executable).parents[1])
        )
        self.env.update({name: str(port) for name, port in self.ports.items()})
        self.env["SPARK_READY_TIMEOUT"] = str(int(120 * SLOWDOWN))
        self.master_url = ""

    def script(self, name: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(DEPLOY / name)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=240 * SLOWDOWN,
            check=False,
        )

    def pid(self, daemon: str) -> int:
        return int((self.state / "run" / f"{daemon}.pid").read_text())

    def master_state(self) -> dict:
        url = f"http://127.0.0.1:{self.ports['SPARK_MASTER_WEBUI_PORT']}/json/"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=5) as response:
            return json.load(response)

    def processes(self) -> list[str]:
        """Command lines of live processes with our state dir in them or as working dir."""
        found = []
        for entry in Path("/proc").iterdir():
            try:
                args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                cwd = os.readlink(entry / "cwd")
            except (OSError, ValueError):
                continue
            if args and (str(self.state) in args or cwd.startswith(str(self.state))):
                found.append(f"{entry.name}: {args[:160]}")
        return found


def listening_addresses(pid: int) -> list[str]:
    """``address:port`` of every TCP socket ``pid`` listens on (``ss -ltnp``)."""
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3] for line in out.splitlines() if f"pid={pid}," in line]


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory):
    cluster = Standalone(tmp_path_factory.mktemp("spark-standalone"))
    try:
        up = cluster.script("spark-up.sh")
        assert up.returncode == 0, f"spark-up.sh failed:\n{up.stdout}\n{up.stderr}"
        cluster.master_url = up.stdout.strip()
        yield cluster
    finally:
        down = cluster.script("spark-down.sh")
        assert down.returncode == 0, f"spark-down.sh left processes:\n{down.stdout}\n{down.stderr}"
        assert cluster.processes() == []


def publish_input(store: MonitorStore, now: int) -> None:
    """Word count on two workers (tests/test_monitoring_zk.py), plus a duplicate record, a
    corrupt one, a worker last seen 30 minutes ago (missing) and a second topology."""
    publish_wordcount(store, "wc-1", now)
    duplicate = window("wc-1", "sup-a", 6700, now, [(10, 10, "spout", 400, 0)], seq=101)
    path = store.monitor_path("wc-1", duplicate.worker) + f"/w-{now}-republished"
    store.client.create(path, encode(record_document(duplicate)), makepath=True)
    corrupt = window("wc-1", "sup-b", 6710, now - 5, [(8, 8, "split", 1, 0)])
    store.publish_window(corrupt, data=b"\x1f\x8b truncated")
    store.publish_window(window("wc-1", "sup-c", 6720, now - 1_800_000, [(12, 12, "x", 3, 0)]))
    publish_wordcount(store, "wc-2", now - 20_000, windows=3, scale=2.5, workers=("sup-d", "sup-e"))


def aggregate(master: str, zookeeper: str, root: str, *options: str) -> dict:
    """One ``scheduler-py aggregate --once --json`` run; its documents."""
    result = subprocess.run(
        [
            SCHEDULER_PY,
            "aggregate",
            "--once",
            "--json",
            "--no-cleanup",
            "--master",
            master,
            "--zookeeper",
            zookeeper,
            "--root",
            root,
            "--window",
            "10m",  # every recent window stays in, however slow the machine
            "--retention",
            "1h",  # the missing worker's window is kept
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, f"aggregate --master {master} failed:\n{result.stderr[-4000:]}"
    match = re.search(r"^\{.*?^\}$", result.stdout, re.DOTALL | re.MULTILINE)
    assert match, f"no JSON documents in the output of --master {master}:\n{result.stdout}"
    return json.loads(match.group(0))


def without_run_time(documents: dict, started_ms: int, finished_ms: int) -> dict:
    """The documents without the two fields that are the run's own clock (each run is the
    first under its root, so its reference is itself), after checking them."""
    for document in documents.values():
        computed = document.pop("computed_at_ms")
        assert started_ms <= computed <= finished_ms
        assert document["change"].pop("reference_computed_at_ms") == computed
    return documents


def test_aggregate_on_standalone_equals_local(standalone, zookeeper, tmp_path):
    for daemon in ("master", "worker"):
        addresses = listening_addresses(standalone.pid(daemon))
        assert len(addresses) == 2, f"the {daemon} should listen on its RPC and UI ports only"
        for address in addresses:
            assert re.fullmatch(r"(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]):\d+", address), (
                f"the {daemon} listens on {address}, expected 127.0.0.1 only"
            )
    master = standalone.master_state()
    assert master["status"] == "ALIVE" and master["url"] == standalone.master_url
    assert [(w["host"], w["state"], w["cores"]) for w in master["workers"]] == [
        ("127.0.0.1", "ALIVE", 1)
    ]

    client = connect(zookeeper.hosts)
    try:
        started = int(time.time() * 1000)
        for root in ("/spark-local", "/spark-standalone"):
            publish_input(MonitorStore(client, root), started)
    finally:
        client.stop()
        client.close()

    local = aggregate("local[*]", zookeeper.hosts, "/spark-local")
    on_cluster = aggregate(
        standalone.master_url,
        zookeeper.hosts,
        "/spark-standalone",
        "--parquet",  # the executor writes, the driver commits
        str(tmp_path / "pq-standalone"),
    )
    finished = int(time.time() * 1000)

    # it ran on the cluster (a fresh one: nothing else runs there): the master lists the
    # finished application, its executor's work dir holds its logs, and it wrote every
    # Parquet table
    wait_until(
        lambda: standalone.master_state()["completedapps"],
        60 * SLOWDOWN,
        "the master to list the aggregation as a completed application",
        lambda: json.dumps(standalone.master_state()["completedapps"]),
    )
    assert list(standalone.state.glob("work/app-*/*/stderr"))
    for table in ("executors", "pairs", "components", "edges", "workers"):
        for topology in ("wc-1", "wc-2"):
            written = tmp_path / "pq-standalone" / table / f"topology_id={topology}"
            assert list(written.glob("*.parquet")), f"no {table} Parquet of {topology}"

    local = without_run_time(local, started, finished)
    on_cluster = without_run_time(on_cluster, started, finished)
    # the input exercises every rule, so the equality below is not a trivial one
    assert sorted(local) == ["wc-1", "wc-2"]
    wc1 = local["wc-1"]
    assert (wc1["records"], wc1["windows"], wc1["corrupt_records"], wc1["duplicate_records"]) == (
        12,
        6,
        1,
        1,
    )
    assert [m["supervisor_id"] for m in wc1["missing"]] == ["sup-c"]
    assert len(wc1["executors"]) == 11 and len(wc1["pairs"]) == 6 and len(wc1["edges"]) == 2
    assert local["wc-2"]["records"] == 6
    for topology in local:
        for part in local[topology]:
            assert on_cluster[topology][part] == local[topology][part], (topology, part)
    assert on_cluster == local


def test_spark_up_is_idempotent_and_down_cleans_up_after_kill_9(standalone):
    again = standalone.script("spark-up.sh")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == standalone.master_url
    assert "already running" in again.stderr

    worker = standalone.pid("worker")
    os.kill(worker, signal.SIGKILL)  # a crash: the pid file stays behind
    wait_until(
        lambda: not Path(f"/proc/{worker}").exists() or _zombie(worker),
        30,
        f"the killed worker (pid {worker}) to exit",
    )
    for attempt in (1, 2):
        down = standalone.script("spark-down.sh")
        assert down.returncode == 0, f"spark-down.sh #{attempt}:\n{down.stdout}\n{down.stderr}"
        assert not list((standalone.state / "run").glob("*.pid"))
    assert standalone.processes() == []


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"
    except OSError:
        return True
