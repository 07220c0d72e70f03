"""Shared pytest fixtures and options."""

from __future__ import annotations

import os

import pytest

from scheduler_py.devtools.zkserver import LocalZooKeeper, storm_home


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
