"""Which Spark masters get the loopback driver address (scheduler_py/monitoring/masters.py)."""

from __future__ import annotations

import pytest

from scheduler_py.monitoring.masters import master_on_loopback


@pytest.mark.parametrize(
    ("master", "on_loopback"),
    [
        ("spark://127.0.0.1:7077", True),
        ("spark://127.0.0.2:12077", True),
        ("spark://localhost:7077,127.0.0.1:7078", True),
        ("spark://[::1]:7077", True),
        ("spark://spark-master:7077", False),
        ("spark://10.0.0.5:7077", False),
        ("spark://127.0.0.1:7077,10.0.0.5:7077", False),
        ("local[*]", False),
        ("yarn", False),
    ],
)
def test_master_on_loopback(master, on_loopback):
    assert master_on_loopback(master) is on_loopback
