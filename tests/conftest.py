"""Shared pytest fixtures and options."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from scheduler_py.devtools.zkserver import LocalZooKeeper, storm_home
from scheduler_py.service.auth import SECRET_ENV, SECRET_FILE_ENV

settings.register_profile("scheduler-py", print_blob=True)
settings.load_profile("scheduler-py")
"""A failing property test prints ``@reproduce_failure(...)`` with the exact input, and
hypothesis prints the seed of a run that does not reproduce from its database
(``--hypothesis-seed=N`` replays it): the fuzz tests explore new inputs on every run."""


def pytest_configure(config: pytest.Config) -> None:
    """The operator secret (scheduler_py/service/auth.py) of every brain the tests start and of
    every ``scheduler-py replan`` they run: a file of this test session, never the user's
    ``~/.config``."""
    os.environ.pop(SECRET_ENV, None)
    secret_dir = Path(tempfile.mkdtemp(prefix="scheduler-py-secret-"))
    os.environ[SECRET_FILE_ENV] = str(secret_dir / "operator.secret")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The fuzzing input counts and measurements of the tests that ran (tests/fuzz_report.py)."""
    from tests import fuzz_report

    if not fuzz_report.INPUTS and not fuzz_report.LINES:
        return
    terminalreporter.write_sep("-", "fuzzing: inputs run per property")
    for name, count in sorted(fuzz_report.INPUTS.items()):
        terminalreporter.write_line(f"{name}: {count} inputs")
    for line in fuzz_report.LINES:
        terminalreporter.write_line(line)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``SCHEDULER_PY_SKIP_CLUSTER=1`` deselects the real-cluster tests (for quick loops)."""
    if os.environ.get("SCHEDULER_PY_SKIP_CLUSTER") != "1":
        return
    skip = pytest.mark.skip(reason="SCHEDULER_PY_SKIP_CLUSTER=1")
    for item in items:
        if "cluster" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory: pytest.TempPathFactory):
    """A real ZooKeeper (the Storm home's jars) for one test module; skipped without them."""
    if storm_home() is None:
        pytest.skip(
            "no Storm home with ZooKeeper jars (build/storm-home or $STORM_HOME): "
            "`make test` installs it first (deploy/install-storm.sh)"
        )
    server = LocalZooKeeper(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _test_process_keeps_its_cpu_priority():
    """``scheduler-py aggregate`` lowers its own priority (monitoring/priority.py); a test
    that runs it in-process without ``--nice 0 --cpu-weight 0`` would slow every later test
    and every cluster process started after it (it happened: a reconfiguration pause test
    failed on it)."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    yield
    after = os.getpriority(os.PRIO_PROCESS, 0)
    assert after == before, (
        f"this test changed the test process's niceness from {before} to {after}: run "
        "`scheduler-py aggregate` in-process with --nice 0 --cpu-weight 0"
    )
