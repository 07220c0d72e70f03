"""The docker-compose cluster (docker-compose.yml, deploy/Dockerfile), built and run for real:
a Docker engine (started when none runs, stopped afterwards if this test started it), the
base image (made with debootstrap where Docker Hub is out of reach), `compose build`,
`up -d`, word count submitted by the `submit` service, then what an operator relies on —
the brain placed it, the worker monitor's records and the PySpark aggregate reached
ZooKeeper, `replan --dry-run` and the dashboard answer, a killed supervisor's executors
are re-placed by the brain within two scheduling rounds — and `down -v` leaves nothing. The
brain and the dashboard answer a peer on the compose network only with a credential: the
operator secret (`serve --require-auth-reads`), the dashboard's token (`--require-token`).

Runs where a Docker engine can be started (root with Debian's docker.io, or a running
engine); skips with the reason elsewhere. ``SCHEDULER_PY_COMPOSE_TEST=require`` (``make
compose-test``) turns that skip into a failure; ``=skip`` skips it."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from email.message import Message

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.monitoring.zk import MonitorStore, connect
from scheduler_py.nimbus import NimbusCtl
from scheduler_py.service.client import brain_client, call_brain
from scheduler_py.service.wire import wire
from tests import dashboard_browser
from tests.cluster.compose import (
    DEPLOY,
    ComposeProject,
    EngineUnavailable,
    base_image,
    compose_command,
    environment,
    start_engine,
    stop_engine,
    timed,
)
from tests.cluster.waiting import machine_timeout, wait_until

# the first build downloads Debian packages, Storm's jars and PySpark: longer than the
# suite's per-test limit (pyproject.toml), which counts the module fixture's set-up
pytestmark = pytest.mark.timeout(3600)
MODE = os.environ.get("SCHEDULER_PY_COMPOSE_TEST", "auto")
PROJECT = "spycomposetest"
# its own /24 of 198.18.0.0/15, beside the recipe's default 198.19.250.0/24
SUBNET = "198.19.251.0/24"
NAME = "wordcount"
MONITOR_ROOT = "/scheduler-py"
ROUND_SECS = 5  # STORM_MONITOR_FREQ_SECS in docker-compose.yml


def _report(line: str) -> None:
    print(f"[compose-test] {line}", flush=True)


@pytest.fixture(scope="module")
def compose():
    if MODE == "skip":
        pytest.skip("SCHEDULER_PY_COMPOSE_TEST=skip")
    env = environment(
        COMPOSE_PROJECT_NAME=PROJECT,
        COMPOSE_SUBNET=SUBNET,
        # published on random loopback ports: never in the way of a native cluster
        NIMBUS_PUBLISH="127.0.0.1:",
        BRAIN_PUBLISH="127.0.0.1:",
        DASHBOARD_PUBLISH="127.0.0.1:",
        SPARK_UI_PUBLISH="127.0.0.1:",
    )
    try:
        started_engine = start_engine(env)
        command = compose_command()
    except EngineUnavailable as reason:
        if MODE == "require":
            pytest.fail(f"SCHEDULER_PY_COMPOSE_TEST=require, but {reason}")
        pytest.skip(str(reason))
    project = None
    try:
        image, seconds = timed(base_image, env)
        _report(f"base image {image} ready in {seconds:.0f} s")
        env["DEBIAN_IMAGE"] = image
        # the build trusts what this host trusts (a TLS-intercepting proxy's CA)
        subprocess.run([str(DEPLOY / "host-ca-certificates.sh")], env=env, check=True, timeout=60)
        project = ComposeProject(PROJECT, env, command)
        project.run("down", "-v", "--remove-orphans", timeout=300)  # a killed earlier run
        _, seconds = timed(project.run, "build", timeout=3600)
        _report(f"`{' '.join(command)} build` took {seconds:.0f} s")
        _report(f"image size: {_image_size()}")
        _, seconds = timed(project.run, "up", "-d", timeout=900)
        _report(f"`up -d` took {seconds:.0f} s")
        yield project
    finally:
        try:
            if project is not None:
                _dump_logs(project)
                project.run("down", "-v", "--remove-orphans", timeout=600)
                left = project.leftovers()
                assert not any(left.values()), f"`down -v` left {left}"
        finally:
            if started_engine:
                stop_engine(env)


def _image_size() -> str:
    out = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Size}}", "scheduler-py/storm:2.8.4"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return f"{int(out) / 1e6:.0f} MB" if out.isdigit() else "unknown"


def _dump_logs(project: ComposeProject) -> None:
    """The last lines of every service, for a failure's report (pytest shows stdout)."""
    logs = project.run("logs", "--no-color", "--tail", "40", check=False, timeout=120)
    print(logs.stdout[-20000:])


@pytest.fixture(scope="module")
def nimbus(compose):
    ctl = NimbusCtl(compose.address("nimbus"), 6627)
    wait_until(
        lambda: _supervisors(ctl) == 3,
        machine_timeout(240),
        "Nimbus to answer with the 3 supervisor containers registered",
        lambda: f"(saw {_supervisors(ctl)})",
    )
    return ctl


def _supervisors(ctl: NimbusCtl) -> int:
    try:
        return len(ctl.cluster_summary()["supervisors"])
    except Exception:  # Nimbus not up yet
        return -1


def _read_in(compose: ComposeProject, service: str, path: str) -> str:
    """The one-line credential file ``path`` in ``service``'s container, once it exists (the
    brain and the dashboard create theirs at their first start)."""

    def read():
        result = compose.run("exec", "-T", service, "cat", path, check=False, timeout=60)
        return result.stdout.strip() if result.returncode == 0 else None

    return wait_until(read, machine_timeout(60), f"{path} in the {service} container")


@pytest.fixture(scope="module")
def operator_secret(compose) -> str:
    return _read_in(compose, "brain", "/var/storm/brain/operator.secret")


@pytest.fixture(scope="module")
def dashboard_token(compose) -> str:
    return _read_in(compose, "dashboard", "/var/storm/dashboard.token")


def _get(url: str, token: str | None = None) -> tuple[int, Message, bytes]:
    """``(status, headers, body)`` of a GET, also for an error status; the headers' names
    in any case (waitress sends ``Www-Authenticate``)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def _answered(url: str, token: str | None = None) -> int | None:
    """The status of a GET, or ``None`` while nothing answers."""
    try:
        return _get(url, token)[0]
    except OSError:
        return None


@pytest.fixture(scope="module")
def wordcount(compose, nimbus):
    """Word count submitted the way docs/install.md says, by the `submit` service."""
    _, seconds = timed(
        compose.run, "--profile", "demo", "run", "--rm", "submit", timeout=machine_timeout(600)
    )
    _report(f"submit (build the jar, sparse submit, 100 acked tuples) took {seconds:.0f} s")
    topology_id = nimbus.find_topology_id(NAME)
    assert topology_id, f"{NAME} is not running after the submit service finished"
    return topology_id


def test_the_brain_placed_word_count(compose, nimbus, wordcount):
    status = nimbus.topology_state(NAME).sched_status or ""
    assert status.startswith("Scheduled by scheduler-py brain"), status
    hosts = {run.host for run in nimbus.executor_runs(NAME)}
    assert hosts <= {"supervisor1", "supervisor2", "supervisor3"}, hosts


def test_monitor_records_and_the_aggregate_reach_zookeeper(compose, wordcount):
    client = connect(f"{compose.address('zookeeper')}:2181")
    try:
        store = MonitorStore(client, MONITOR_ROOT)
        windows = wait_until(
            lambda: store.load_windows(wordcount),
            machine_timeout(120),
            "the worker monitor's window records in ZooKeeper",
        )
        _report(f"{len(windows)} window records in ZooKeeper")
        aggregate = wait_until(
            lambda: store.read_aggregate(wordcount),
            machine_timeout(300),
            "an aggregate written by the `aggregate` service (Spark standalone)",
        )
        assert aggregate["executors"], aggregate
        _report(f"aggregate over {aggregate.get('records')} records")
    finally:
        client.stop()


def _wait_for_measured_pairs(compose: ComposeProject, topology_id: str) -> None:
    """Until the `aggregate` service has written an aggregate of ``topology_id`` with executor
    pairs; a timeout names what ZooKeeper holds and shows the service's last log lines."""
    client = connect(f"{compose.address('zookeeper')}:2181")
    try:
        store = MonitorStore(client, MONITOR_ROOT)

        def seen() -> str:
            aggregate = store.read_aggregate(topology_id) or {}
            age = time.time() - aggregate.get("computed_at_ms", 0) / 1000
            logs = compose.run("logs", "--no-color", "--tail", "30", "aggregate", check=False)
            return (
                f"(window znodes {len(store.load_windows(topology_id))}; aggregate of "
                f"{aggregate.get('records')} records, {age:.0f} s old, "
                f"{len(aggregate.get('pairs', []))} pairs; the aggregate service's last lines:\n"
                f"{logs.stdout[-6000:]})"
            )

        wait_until(
            lambda: (store.read_aggregate(topology_id) or {}).get("pairs"),
            machine_timeout(300),
            "an aggregate with measured executor pairs",
            seen,
        )
    finally:
        client.stop()


def test_replan_dry_run_answers_inside_the_brain_container(compose, wordcount):
    result = compose.run(
        "exec", "-T", "brain", "scheduler-py", "replan", "--dry-run", NAME, timeout=300
    )
    assert NAME in result.stdout, result.stdout
    _report("replan --dry-run: " + result.stdout.strip().splitlines()[0])


def test_nothing_answers_an_unauthenticated_peer(
    compose, wordcount, operator_secret, dashboard_token
):
    """From this host, a peer on the compose network: the brain refuses every read and an
    unsealed round without a credential, the dashboard every page and API request; with the
    credential both answer."""
    brain = f"{compose.address('brain')}:9627"
    client = brain_client(brain, timeout_ms=30_000)
    try:
        for name, call in (
            ("status", lambda: client.status()),
            ("history", lambda: client.history(NAME)),
            ("replan --dry-run", lambda: client.replan(NAME, "", True, "", "")),
            ("status, a guessed secret", lambda: client.status("guess")),
        ):
            with pytest.raises(wire().BrainError) as refused:
                call()
            assert refused.value.needs_operator_secret is True, (name, refused.value)
            assert "--require-auth-reads" in refused.value.message, (name, refused.value)
        unsealed = wire().ClusterSnapshot(
            round=1, timestamp_ms=int(time.time() * 1000), supervisors=[], topologies=[]
        )
        with pytest.raises(wire().BrainError, match="unauthenticated round"):
            client.schedule(unsealed, None, None)
    finally:
        client.close()
    status = json.loads(call_brain(brain, "status", read_secret=lambda: operator_secret))
    assert len(status["supervisors"]) >= 2, status
    _report("brain: reads and an unsealed round refused without a credential")

    base = f"http://{compose.address('dashboard')}:9628"
    wait_until(lambda: _answered(f"{base}/login"), machine_timeout(120), "the dashboard to answer")
    for path in ("/", "/decisions", "/api/v1/topologies", "/api/v1/cluster", "/api/v1/decisions"):
        code, headers, body = _get(base + path)
        assert code == 401, (path, code, body[:300])
        assert headers.get("WWW-Authenticate", "").startswith("Bearer"), (path, headers)
        assert b"--require-token" in body, (path, body[:300])
        assert NAME.encode() not in body, (path, body[:300])
        code, _, body = _get(base + path, token="a guess")
        assert code == 401, (path, code, body[:300])
    wait_until(
        lambda: _answered(f"{base}/api/v1/topologies", dashboard_token) == 200,
        machine_timeout(120),
        "the dashboard to answer /api/v1/topologies with its token (it reads the brain with "
        "the operator secret)",
    )
    _report("dashboard: every page and API request refused without its token")


def test_the_dashboard_answers_and_its_pages_load_in_chromium(
    compose, nimbus, wordcount, dashboard_token, tmp_path
):
    base = f"http://{compose.address('dashboard')}:9628"

    def topologies():
        try:
            code, _, body = _get(f"{base}/api/v1/topologies", token=dashboard_token)
        except OSError:
            return None
        return json.loads(body)["topologies"] if code == 200 else None

    listed = wait_until(topologies, machine_timeout(120), "the dashboard's /api/v1/topologies")
    assert NAME in {t["name"] for t in listed}, listed
    code, _, body = _get(f"{base}/api/v1/cluster", token=dashboard_token)
    cluster = json.loads(body)
    assert code == 200 and len(cluster["supervisors"]) == 3, cluster
    if dashboard_browser.missing():
        pytest.skip(f"the pages in a browser: {dashboard_browser.missing()}")
    runs = nimbus.executor_runs(NAME)
    with dashboard_browser.chromium() as driver:
        dashboard_browser.log_in(driver, base, dashboard_token, timeout=machine_timeout(30))
        visit = dashboard_browser.Visit(driver, base, tmp_path, timeout=machine_timeout(30))
        visit.cluster(supervisors=3, topology=NAME)
        visit.topology(NAME, executors=len(runs))
        visit.decisions(expect=wordcount)
        visit.algorithms(list(registry.algorithms()))
    assert visit.errors == {page: [] for page in visit.errors}, visit.errors


def test_a_killed_supervisor_is_replaced_by_the_brain_within_two_rounds(
    compose, nimbus, wordcount, operator_secret
):
    brain = f"{compose.address('brain')}:9627"
    hosts = sorted({run.host for run in nimbus.executor_runs(NAME)})
    victim = hosts[-1]
    compose.run("kill", victim)
    killed = time.monotonic()
    gone_round: list[int] = []

    def replaced():
        status = json.loads(call_brain(brain, "status", read_secret=lambda: operator_secret))
        seen = {s["host"] for s in status["supervisors"]}
        if victim not in seen and not gone_round:
            gone_round.append(status["round"])
        runs = nimbus.executor_runs(NAME)
        if gone_round and runs and all(run.host != victim for run in runs):
            return status["round"]
        return None

    # Nimbus notices after nimbus.supervisor.timeout.secs (30 s, deploy/storm.yaml.template)
    done_round = wait_until(
        replaced,
        machine_timeout(180),
        f"the executors on the killed {victim} to be re-placed on the others",
        lambda: f"(brain saw {victim} gone at round {gone_round or 'never'})",
    )
    seconds = time.monotonic() - killed
    rounds = done_round - gone_round[0]
    _report(
        f"killed {victim}: re-placed {seconds:.0f} s after the kill, {rounds} round(s) "
        "after the brain's snapshot lost it"
    )
    assert rounds <= 2, f"re-placed {rounds} rounds after the supervisor was gone"
    status = nimbus.topology_state(NAME).sched_status or ""
    assert status.startswith("Scheduled by scheduler-py brain"), status
