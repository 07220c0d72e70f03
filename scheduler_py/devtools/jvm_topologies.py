"""The JVM benchmark topologies of ``topologies/jvm/`` (word count and R-Storm's Linear,
Diamond and Star; options in ``topologies/README.md``, "JVM topologies"): the jar, built
with Maven when missing or older than its sources, and :func:`submit`, which runs
``$STORM_HOME/bin/storm jar`` against a cluster and returns once Nimbus lists the topology::

    from scheduler_py.devtools.jvm_topologies import submit
    topology_id = submit("linear", "lin-1", {"bench.payload.bytes": 4096}, env=cluster_env)

``env`` is the cluster's settings as ``deploy/cluster-up.sh`` records them in
``$CLUSTER_DIR/run/cluster.env`` (``STORM_HOME``, ``STORM_CONF_DIR``, ``STORM_NIMBUS``);
missing keys come from the process environment, then from this checkout's defaults.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from scheduler_py.nimbus.client import DEFAULT_NIMBUS, NimbusCtl, parse_hostport

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "topologies" / "jvm"
JAR = MODULE / "target" / "scheduler-py-topologies.jar"
MAIN_CLASS = "io.schedulerpy.topologies.Submit"
KINDS = ("wordcount", "linear", "diamond", "star")
BUILD_TIMEOUT_S = 600.0
SUBMIT_TIMEOUT_S = 180.0


class JvmTopologyError(RuntimeError):
    """Building or submitting a JVM topology failed; the message says what to do."""


def _sources(module: Path) -> list[Path]:
    return [module / "pom.xml", *(p for p in (module / "src" / "main").rglob("*") if p.is_file())]


def jar_is_stale(jar: Path = JAR, module: Path = MODULE) -> bool:
    """True when ``jar`` is missing or older than ``pom.xml`` or a file under ``src/main/``."""
    if not jar.is_file():
        return True
    built = jar.stat().st_mtime
    return any(source.stat().st_mtime > built for source in _sources(module))


def ensure_jar(*, mvn: str = "mvn", timeout: float = BUILD_TIMEOUT_S) -> Path:
    """The topologies jar, built first (``mvn package``, tests skipped: ``make test-java``
    runs them) when :func:`jar_is_stale`."""
    if not jar_is_stale():
        return JAR
    command = [mvn, "-q", "-B", "-f", str(MODULE / "pom.xml"), "-DskipTests", "package"]
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, check=False
        )
    except FileNotFoundError:
        raise JvmTopologyError(
            f"cannot build {JAR}: '{mvn}' not found; install Maven (deploy/install-system-deps.sh)"
        ) from None
    if result.returncode != 0 or not JAR.is_file():
        raise JvmTopologyError(
            f"building {JAR} failed ({' '.join(command)} exited {result.returncode}):\n"
            f"{_tail(result.stdout + result.stderr)}"
        )
    JAR.touch()  # maven leaves an up-to-date jar's time alone
    return JAR


def conf_option(key: str, value: object) -> str:
    """``key=value`` for ``storm jar -c``: Storm parses the value as JSON and keeps it as a
    string when that fails, so strings pass as they are and everything else as JSON."""
    if not key or "=" in key:
        raise ValueError(f"expected a topology conf key without '=', found {key!r}")
    text = value if isinstance(value, str) else json.dumps(value)
    return f"{key}={text}"


def storm_jar_command(
    kind: str, name: str, conf: Mapping[str, object], storm_home: Path, jar: Path = JAR
) -> list[str]:
    """The ``bin/storm jar`` command line that submits ``kind`` as ``name`` with ``conf``."""
    if kind not in KINDS:
        raise ValueError(f"unknown JVM topology kind {kind!r}: expected one of {list(KINDS)}")
    command = [str(storm_home / "bin" / "storm"), "jar", str(jar), MAIN_CLASS, kind, name]
    for key, value in conf.items():
        command += ["-c", conf_option(key, value)]
    return command


def submit(
    kind: str,
    name: str,
    conf: Mapping[str, object] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = SUBMIT_TIMEOUT_S,
) -> str:
    """Submit JVM topology ``kind`` as ``name`` with topology conf ``conf`` (``bench.*``
    options and any Storm key) and return its id once Nimbus lists it.

    Raises :class:`JvmTopologyError` when the jar cannot be built, ``storm jar`` fails (its
    output is in the message), or Nimbus does not list the topology within ``timeout``."""
    settings = {**os.environ, **(env or {})}
    storm_home = Path(settings.get("STORM_HOME") or REPO / "build" / "storm-home")
    if not (storm_home / "bin" / "storm").is_file():
        raise JvmTopologyError(
            f"no Storm launcher at {storm_home}/bin/storm: run `make storm-home` or set STORM_HOME"
        )
    command = storm_jar_command(kind, name, conf or {}, storm_home, ensure_jar())
    deadline = time.monotonic() + timeout
    try:
        result = subprocess.run(
            command,
            env=settings,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise JvmTopologyError(
            f"storm jar ({kind} as {name}) did not finish within {timeout:.0f}s; is Nimbus up?"
        ) from exc
    if result.returncode != 0:
        raise JvmTopologyError(
            f"storm jar ({kind} as {name}) exited {result.returncode}:\n"
            f"{_tail(result.stdout + result.stderr)}"
        )
    host, port = parse_hostport(settings.get("STORM_NIMBUS") or DEFAULT_NIMBUS)
    nimbus = NimbusCtl(host, port)
    while True:
        topology_id = nimbus.find_topology_id(name)
        if topology_id:
            return topology_id
        if time.monotonic() >= deadline:
            raise JvmTopologyError(
                f"Nimbus {host}:{port} does not list {name} {timeout:.0f}s after `storm jar` "
                f"reported:\n{_tail(result.stdout)}"
            )
        time.sleep(0.5)


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
