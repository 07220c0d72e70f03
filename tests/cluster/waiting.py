"""Polling helper shared by the real-cluster tests."""

from __future__ import annotations

import time


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
