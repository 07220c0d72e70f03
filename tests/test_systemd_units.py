"""The systemd units in deploy/systemd/ (docs/install.md, "Running as services"): systemd
accepts them (``systemd-analyze verify``, with no warning), and each ExecStart is a command line
``scheduler-py``'s own parser accepts, with the keys the services rely on (a dedicated user,
Restart=on-failure, the brain's state under StateDirectory=, the aggregation's priority set by
systemd rather than by its own cgroup writes)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_py.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
UNITS = REPO / "deploy" / "systemd"
BINARY = "/opt/scheduler-py/bin/scheduler-py"
SPECIFIERS = {"%S": "/var/lib", "%L": "/var/log", "%%": "%"}
SERVICES = {
    "scheduler-py.service": "serve",
    "scheduler-py-aggregate.service": "aggregate",
    "scheduler-py-dashboard.service": "dashboard",
}


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """Sections -> key -> values (systemd allows a key more than once), with backslash
    continuations joined and comments dropped."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    pending = ""
    for raw in path.read_text().splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"{path.name}: {line!r} before any section"
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def _one(unit: dict[str, dict[str, list[str]]], section: str, key: str) -> str:
    values = unit.get(section, {}).get(key, [])
    assert len(values) == 1, f"[{section}] {key}: expected one value, found {values}"
    return values[0]


def _environment(unit: dict[str, dict[str, list[str]]]) -> dict[str, str]:
    return dict(
        item.split("=", 1)
        for line in unit["Service"].get("Environment", [])
        for item in shlex.split(line)
    )


def exec_argv(unit: dict[str, dict[str, list[str]]]) -> list[str]:
    """ExecStart as the process would see it: ${VAR} from the unit's Environment= defaults,
    the specifiers it uses resolved as for a system service."""
    line = _one(unit, "Service", "ExecStart")
    env = _environment(unit)
    unknown = set(re.findall(r"%.", line)) - set(SPECIFIERS)
    assert not unknown, f"specifiers the test does not resolve: {unknown}"
    line = re.sub(r"%.", lambda m: SPECIFIERS[m.group(0)], line)
    line = re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], line)
    return shlex.split(line)


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_execstart_is_a_command_line_the_cli_accepts(name, capsys):
    unit = parse_unit(UNITS / name)
    argv = exec_argv(unit)
    assert argv[0] == BINARY
    assert argv[1] == SERVICES[name]
    try:
        args = build_parser().parse_args(argv[1:])
    except SystemExit:
        pytest.fail(f"{name}: scheduler-py refuses {argv[1:]}: {capsys.readouterr().err}")
    assert args.command == SERVICES[name]


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_service_runs_as_the_dedicated_user_and_restarts_on_failure(name):
    unit = parse_unit(UNITS / name)
    sysusers = (UNITS / "scheduler-py.sysusers.conf").read_text().split("\n")
    user = next(line.split()[1] for line in sysusers if line.startswith("u "))
    assert _one(unit, "Service", "User") == user == _one(unit, "Service", "Group")
    assert _one(unit, "Service", "Restart") == "on-failure"
    assert _one(unit, "Service", "StateDirectory") == "scheduler-py"
    assert _one(unit, "Install", "WantedBy") == "multi-user.target"
    env_file = dict(
        line.split("=", 1)
        for line in (UNITS / "scheduler-py.env").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert _environment(unit) == env_file, "the env file documents the units' defaults"


def test_the_brain_keeps_its_state_in_its_state_directory():
    unit = parse_unit(UNITS / "scheduler-py.service")
    args = build_parser().parse_args(exec_argv(unit)[1:])
    state = Path("/var/lib") / _one(unit, "Service", "StateDirectory")
    for path in (args.state_dir, args.shim_key_file, args.secret_file):
        assert Path(path).is_relative_to(state), path
    assert args.plan_log, "logs its plans"


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_service_finds_the_cluster_in_the_hosts_storm_yaml(name, tmp_path, monkeypatch):
    """No address is repeated in a unit: each reads the storm.yaml in ``STORM_CONF_DIR``
    (the env file's one setting), as the commands resolve it (cli/cluster_options.py)."""
    from scheduler_py.cli.cluster_options import resolve

    for variable in ("SCHEDULER_PY_ZOOKEEPER", "SCHEDULER_PY_NIMBUS", "SCHEDULER_PY_BRAIN"):
        monkeypatch.delenv(variable, raising=False)
    (tmp_path / "storm.yaml").write_text(
        "storm.zookeeper.servers: [zk1.example, zk2.example]\n"
        "storm.zookeeper.port: 2182\n"
        "nimbus.seeds: [nimbus1.example, nimbus2.example]\n"
        "nimbus.thrift.port: 6628\n"
    )
    unit = parse_unit(UNITS / name)
    argv = [
        item.replace(_environment(unit)["STORM_CONF_DIR"], str(tmp_path))
        for item in exec_argv(unit)
    ]
    assert "--zookeeper" not in argv and "--nimbus" not in argv, "addresses come from storm.yaml"
    args = build_parser().parse_args(argv[1:])
    addresses = resolve(args, explicit_only=SERVICES[name] == "serve")
    assert addresses.zookeeper == "zk1.example:2182,zk2.example:2182"
    assert addresses.nimbus == (("nimbus1.example", 6628), ("nimbus2.example", 6628))


def test_the_aggregation_gets_its_priority_from_systemd_not_from_its_own_cgroup():
    unit = parse_unit(UNITS / "scheduler-py-aggregate.service")
    assert int(_one(unit, "Service", "CPUWeight")) < 100
    assert 0 < int(_one(unit, "Service", "Nice")) <= 19
    args = build_parser().parse_args(exec_argv(unit)[1:])
    assert args.cpu_weight == 0 and args.cpu_quota is None
    assert args.every, "runs periodically"


def test_systemd_accepts_the_units_without_a_warning(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not installed (deploy/install-system-deps.sh installs it)")
    executable = Path(sys.executable).with_name("scheduler-py")
    assert executable.exists(), f"{executable}: the venv's scheduler-py"
    for name in SERVICES:  # the same units, with the binary of this checkout's venv
        text = (UNITS / name).read_text().replace(BINARY, str(executable))
        (tmp_path / name).write_text(text)
    done = subprocess.run(
        [analyze, "verify", *(str(tmp_path / name) for name in SERVICES)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and not done.stdout.strip() and not done.stderr.strip(), (
        f"systemd-analyze verify (exit {done.returncode}):\n{done.stdout}{done.stderr}"
    )
