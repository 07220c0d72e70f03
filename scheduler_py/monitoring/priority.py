"""Run the aggregation as a good neighbour: a lower CPU priority for this process and every
process it starts (the Spark driver JVM inherits both at fork).

* ``nice``: :func:`os.setpriority` (any user may lower their own priority);
* a cgroup: ``/sys/fs/cgroup/cpu/<name>`` (v1: ``cpu.shares``, ``cpu.cfs_quota_us``) or
  ``/sys/fs/cgroup/<name>`` (v2: ``cpu.weight``, ``cpu.max``), created when missing (needs
  root or a delegated hierarchy), and this process moved into it. The weight is in v2 units
  (1–10000, 100 = an ordinary process; v1 ``cpu.shares`` = weight × 1024 / 100); the quota
  is in cores (``0.5`` = half of one core over every 100 ms period).

Where the cgroup cannot be used (no permission, no cpu controller), the reason is logged
once and the process runs with its niceness only. The group is shared by every aggregation
on the host and left in place (``deploy/cluster-down.sh`` removes it).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP = "scheduler-py-aggregate"
PERIOD_US = 100_000
DEFAULT_NICE = 10
DEFAULT_CPU_WEIGHT = 20
"""A fifth of an ordinary process's share when the CPU is contended; all of it when idle."""


@dataclass(frozen=True)
class Priority:
    nice: int = DEFAULT_NICE
    cpu_weight: int | None = DEFAULT_CPU_WEIGHT
    """cgroup CPU weight, 1–10000 (100 = ordinary); ``None``: no cgroup"""
    cpu_quota_cores: float | None = None
    """hard cap in cores (``None``: no cap)"""

    def __post_init__(self) -> None:
        if not 0 <= self.nice <= 19:
            raise ValueError(f"nice must be in 0..19 (a lower priority), found {self.nice}")
        if self.cpu_weight is not None and not 1 <= self.cpu_weight <= 10_000:
            raise ValueError(f"the CPU weight must be in 1..10000, found {self.cpu_weight}")
        if self.cpu_quota_cores is not None and not 0.01 <= self.cpu_quota_cores <= 1024:
            raise ValueError(
                f"the CPU quota must be in 0.01..1024 cores, found {self.cpu_quota_cores}"
            )


def apply(priority: Priority, root: Path = CGROUP_ROOT, group: str = GROUP) -> list[str]:
    """Apply ``priority`` to this process; returns what was applied, one phrase each."""
    applied = []
    if priority.nice:
        current = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, max(current, priority.nice))
        applied.append(f"nice {os.getpriority(os.PRIO_PROCESS, 0)}")
    if priority.cpu_weight is None and priority.cpu_quota_cores is None:
        return applied
    try:
        applied.append(_join_cgroup(priority, root, group))
    except OSError as error:
        log.warning(
            "running without a CPU cgroup (%s: %s); the niceness still applies. To cap the "
            "aggregation, run it as root or in a delegated cgroup, or pass --cpu-weight 0",
            getattr(error, "filename", None) or root,
            error.strerror or error,
        )
    return applied


def cgroup_version(root: Path = CGROUP_ROOT) -> int | None:
    """2 for the unified hierarchy, 1 for a v1 ``cpu`` controller, ``None`` for neither."""
    if (root / "cgroup.controllers").exists():
        return 2
    if (root / "cpu" / "cpu.shares").exists():
        return 1
    return None


def _join_cgroup(priority: Priority, root: Path, group: str) -> str:
    version = cgroup_version(root)
    if version is None:
        raise OSError(0, "no cgroup v2 hierarchy and no v1 cpu controller", str(root))
    settings: dict[str, str] = {}
    if version == 1:
        path = root / "cpu" / group
        if priority.cpu_weight is not None:
            settings["cpu.shares"] = str(max(2, priority.cpu_weight * 1024 // 100))
        quota = priority.cpu_quota_cores
        settings["cpu.cfs_period_us"] = str(PERIOD_US)
        settings["cpu.cfs_quota_us"] = "-1" if quota is None else str(int(quota * PERIOD_US))
    else:
        path = root / group
        if priority.cpu_weight is not None:
            settings["cpu.weight"] = str(priority.cpu_weight)
        quota = priority.cpu_quota_cores
        settings["cpu.max"] = f"{'max' if quota is None else int(quota * PERIOD_US)} {PERIOD_US}"
    path.mkdir(exist_ok=True)
    for name, value in settings.items():
        (path / name).write_text(value)
    (path / "cgroup.procs").write_text(str(os.getpid()))
    described = ", ".join(f"{name}={value}" for name, value in settings.items())
    return f"cgroup v{version} {path} ({described})"
