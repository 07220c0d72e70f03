"""Shared pytest fixtures and options."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``SCHEDULER_PY_SKIP_CLUSTER=1`` deselects the real-cluster tests (for quick loops)."""
    if os.environ.get("SCHEDULER_PY_SKIP_CLUSTER") != "1":
        return
    skip = pytest.mark.skip(reason="SCHEDULER_PY_SKIP_CLUSTER=1")
    for item in items:
        if "cluster" in item.keywords:
            item.add_marker(skip)
