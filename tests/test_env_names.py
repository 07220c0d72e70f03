"""One environment prefix (``scheduler_py/config/env.py``): every variable the package reads
is listed there under a ``SCHEDULER_PY_`` name, older names still work with one warning, and
docs/configuration.md shows the list."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest

from scheduler_py.cli import build_parser
from scheduler_py.cli.cluster_options import resolve
from scheduler_py.config import env
from scheduler_py.nimbus import default_nimbus

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "scheduler_py"
SHIPPED_APART = ("bench", "devtools")  # the tooling package, not the runtime wheel
FOREIGN = {
    # other programs' variables, read as those programs define them
    "STORM_CONF_DIR",
    "STORM_HOME",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "PYSPARK_PYTHON",
    "PYSPARK_DRIVER_PYTHON",
    "SPARK_LOCAL_IP",
}


def _constant_value(node: ast.AST) -> str | None:
    """``"text"``, or ``env.VAR.name`` (a name of scheduler_py/config/env.py) as its text."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "name"
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "env"
    ):
        var = getattr(env, node.value.attr, None)
        return var.name if isinstance(var, env.EnvVar) else None
    return None


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` and ``NAME = env.VAR.name`` assignments."""
    found = {}
    for node in tree.body:
        value = _constant_value(node.value) if isinstance(node, ast.Assign) else None
        if value is None:
            continue
        for target in node.targets:
            if isinstance(target, ast.Name):
                found[target.id] = value
    return found


def _environ_reads(path: Path) -> list[tuple[int, str | None]]:
    """(line, variable name) of each ``os.environ.get/setdefault/[...]`` and ``os.getenv``
    read in ``path``; the name is ``None`` when it is not a literal or a module constant."""
    tree = ast.parse(path.read_text(), str(path))
    constants = _constants(tree)

    def name_of(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        return _constant_value(node)

    def is_environ(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
            isinstance(node, ast.Name) and node.id == "environ"
        )

    reads = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            func = node.func
            if (func.attr in ("get", "setdefault") and is_environ(func.value)) or (
                func.attr == "getenv"
            ):
                reads.append((node.lineno, name_of(node.args[0])))
        if isinstance(node, ast.Subscript) and is_environ(node.value):
            reads.append((node.lineno, name_of(node.slice)))
    return reads


def _runtime_sources() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] not in SHIPPED_APART
    ]


def test_every_variable_the_runtime_reads_is_listed_or_another_programs():
    listed = {var.name for var in env.ALL}
    unlisted = []
    for path in _runtime_sources():
        for line, name in _environ_reads(path):
            if name is None or (name not in listed and name not in FOREIGN):
                unlisted.append(f"{path.relative_to(REPO)}:{line}: {name}")
    assert not unlisted, (
        "environment reads outside scheduler_py/config/env.py's list (give them a "
        f"SCHEDULER_PY_ name there, the old one as a deprecated alias): {unlisted}"
    )


def test_the_scan_finds_reads():
    reads = {name for path in _runtime_sources() for _, name in _environ_reads(path)}
    assert {"SCHEDULER_PY_SECRET_FILE", "SCHEDULER_PY_ZK_DIGEST_FILE", "XDG_STATE_HOME"} <= reads


def test_the_names_are_spelled_once_in_the_runtime():
    """Every ``SCHEDULER_PY_`` name, and every deprecated one, is written out only in
    scheduler_py/config/env.py; the modules that read one take it from there."""
    names = {var.name for var in env.ALL} | {old for var in env.ALL for old in var.deprecated}
    spelled = []
    for path in _runtime_sources():
        if path == PACKAGE / "config" / "env.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and node.value in names:
                spelled.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value}")
    assert not spelled, f"use scheduler_py.config.env instead of spelling the name: {spelled}"


def test_every_name_has_the_prefix_and_no_alias_is_shared():
    aliases = [old for var in env.ALL for old in var.deprecated]
    assert all(var.name.startswith(env.PREFIX) for var in env.ALL)
    assert len(aliases) == len(set(aliases))
    assert not set(aliases) & {var.name for var in env.ALL}


@pytest.fixture()
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(env, "_warned", set())
    for var in env.ALL:
        for name in (var.name, *var.deprecated):
            monkeypatch.delenv(name, raising=False)


def test_an_old_name_still_works_with_one_warning_naming_the_new_one(
    fresh_warnings, monkeypatch, caplog
):
    monkeypatch.setenv("STORM_NIMBUS", "old-nimbus:6627")
    with caplog.at_level(logging.WARNING, logger=env.__name__):
        assert default_nimbus() == "old-nimbus:6627"
        assert default_nimbus() == "old-nimbus:6627"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "$STORM_NIMBUS is deprecated: set $SCHEDULER_PY_NIMBUS instead (it is read for now)"
    ]


def test_the_new_name_wins_and_an_empty_value_is_unset(fresh_warnings, monkeypatch, caplog):
    monkeypatch.setenv("SCHEDULER_BRAIN", "old:1")
    monkeypatch.setenv("SCHEDULER_PY_BRAIN", "new:2")
    with caplog.at_level(logging.WARNING, logger=env.__name__):
        assert env.BRAIN.get() == "new:2"
    assert not caplog.records
    monkeypatch.setenv("SCHEDULER_PY_BRAIN", "  ")
    assert env.BRAIN.get() == "old:1"


def test_the_dashboard_honours_the_brain_variable_as_replan_does(fresh_warnings, monkeypatch):
    monkeypatch.setenv("SCHEDULER_PY_BRAIN", "brain-host:9700")
    args = build_parser().parse_args(["dashboard", "--no-storm-conf"])
    assert resolve(args).brain == "brain-host:9700"
    args = build_parser().parse_args(["dashboard", "--no-storm-conf", "--brain", "flag:1"])
    assert resolve(args).brain == "flag:1"


def test_replan_reads_the_old_brain_variable(fresh_warnings, monkeypatch, caplog):
    import socket

    from scheduler_py.cli import exit_codes
    from scheduler_py.cli.operator import history_main

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    monkeypatch.setenv("SCHEDULER_BRAIN", f"127.0.0.1:{closed}")
    with caplog.at_level(logging.WARNING), pytest.raises(SystemExit) as stop:
        history_main(["wc", "--no-storm-conf"])
    assert stop.value.code == exit_codes.UNAVAILABLE
    assert f"127.0.0.1:{closed}" in str(stop.value)
    assert any("SCHEDULER_PY_BRAIN" in r.getMessage() for r in caplog.records)


def test_the_reference_lists_every_variable():
    text = (REPO / "docs" / "configuration.md").read_text()
    assert env.markdown_table() in text, (
        "docs/configuration.md's environment table differs from scheduler_py/config/env.py"
    )
