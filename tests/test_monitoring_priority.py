"""The aggregation as a good neighbour: niceness and a CPU cgroup for it and its Spark JVM
(``scheduler_py/monitoring/priority.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_py.monitoring import priority
from scheduler_py.monitoring.priority import Priority

CHILD = """
import os, sys, subprocess
from pathlib import Path
from scheduler_py.monitoring import priority
root, group = Path(sys.argv[1]), sys.argv[2]
print(max(7, os.getpriority(os.PRIO_PROCESS, 0)))  # what the niceness must become
applied = priority.apply(priority.Priority(nice=7, cpu_weight=20, cpu_quota_cores=0.5), root, group)
child = subprocess.run(["cat", "/proc/self/cgroup"], capture_output=True, text=True).stdout
print(os.getpriority(os.PRIO_PROCESS, 0))
print(child.replace(chr(10), " "))
print("; ".join(applied))
"""


def run_child(root: Path, group: str) -> list[str]:
    """Run :data:`CHILD`; returns [expected niceness, niceness, child's cgroups, applied]."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), group],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def test_bad_values_are_refused_with_the_range():
    with pytest.raises(ValueError, match=r"nice must be in 0..19"):
        Priority(nice=-5)
    with pytest.raises(ValueError, match=r"CPU weight must be in 1..10000"):
        Priority(cpu_weight=0)
    with pytest.raises(ValueError, match=r"CPU quota must be in 0.01..1024 cores"):
        Priority(cpu_quota_cores=0.0)


def test_without_a_cgroup_hierarchy_only_the_niceness_applies(tmp_path):
    expected, nice, _, applied = run_child(tmp_path, "g")
    assert nice == expected
    assert applied == f"nice {expected}"


def test_v2_files_written_in_a_unified_hierarchy(tmp_path, monkeypatch):
    (tmp_path / "cgroup.controllers").write_text("cpu\n")
    monkeypatch.setattr(os, "setpriority", lambda *args: None)
    applied = priority.apply(Priority(nice=0, cpu_weight=30, cpu_quota_cores=0.25), tmp_path, "g")
    group = tmp_path / "g"
    assert (group / "cpu.weight").read_text() == "30"
    assert (group / "cpu.max").read_text() == "25000 100000"
    assert (group / "cgroup.procs").read_text() == str(os.getpid())
    assert applied == [f"cgroup v2 {group} (cpu.weight=30, cpu.max=25000 100000)"]


V1 = Path("/sys/fs/cgroup/cpu")


@pytest.mark.skipif(
    not (V1 / "cpu.shares").exists() or not os.access(V1, os.W_OK),
    reason="needs a writable cgroup v1 cpu controller (root)",
)
def test_v1_cgroup_holds_the_process_and_its_children():
    group = f"scheduler-py-test-{os.getpid()}"
    try:
        expected, nice, child_cgroups, applied = run_child(Path("/sys/fs/cgroup"), group)
        assert nice == expected
        assert f"cpu:/{group}" in child_cgroups  # a process the aggregation starts is inside
        assert (V1 / group / "cpu.shares").read_text().strip() == str(20 * 1024 // 100)
        assert (V1 / group / "cpu.cfs_quota_us").read_text().strip() == "50000"
        assert applied.startswith(f"nice {expected}; cgroup v1")
    finally:
        if (V1 / group).exists():
            os.rmdir(V1 / group)
