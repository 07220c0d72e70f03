"""What the fuzzing tests ran, for docs/reliability.md, "Fuzzing":
the inputs each property was run on (hypothesis stops at ``max_examples`` or earlier, when
it has run out of distinct inputs, so the count is taken in the test body) and lines of
measurements. tests/conftest.py prints both at the end of the session."""

from __future__ import annotations

from collections import Counter

INPUTS: Counter[str] = Counter()
"""property (test name) -> inputs it ran on"""
LINES: list[str] = []
"""measurements to print (one line each)"""


def ran(name: str, inputs: int = 1) -> None:
    """Count ``inputs`` more inputs of the property ``name``."""
    INPUTS[name] += inputs


def report(line: str) -> None:
    LINES.append(line)
