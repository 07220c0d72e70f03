"""Polling helper shared by the real-cluster tests."""

from __future__ import annotations

import os
import time


def machine_timeout(base_s: float) -> float:
    """``base_s`` on an idle machine, stretched by how many runnable processes each CPU has
    (the 1-minute load average per CPU), at most 4×."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load_per_cpu = os.getloadavg()[0] / max(1, cpus or 1)
    return base_s * min(4.0, max(1.0, load_per_cpu))


def wait_until(condition, timeout: float, what: str, describe=lambda: ""):
    """Poll ``condition`` every second until it returns something truthy; fail naming ``what``
    (and ``describe()``, the state seen last) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} {describe()}")
