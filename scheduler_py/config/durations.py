"""The one duration syntax of every ``scheduler-py`` flag (docs/configuration.md, "Durations").

A duration is a number with a unit, ``500ms``, ``30s``, ``2m``, ``1h``, or a bare number. A
bare number means seconds, except for the older flags that took milliseconds (their names end
in ``-ms``, e.g. ``serve --round-budget-ms``): there it keeps meaning milliseconds, so that
existing command lines and units run unchanged.
"""

from __future__ import annotations

import math
import re

from scheduler_py.config.values import ConfigValueError

UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
"""Accepted units and their length in seconds."""
_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*")


class DurationError(ConfigValueError):
    """Text that is not a duration, or one out of its flag's range."""


def parse_seconds(text: str, *, bare_unit: str = "s", allow_zero: bool = False) -> float:
    """``text`` as seconds: ``"500ms"`` → 0.5, ``"2m"`` → 120.0; a bare number is in
    ``bare_unit`` (``"s"``, or ``"ms"`` for the older millisecond flags). Zero only when
    ``allow_zero``; negative, infinite and malformed text is a :class:`DurationError`."""
    if bare_unit not in UNIT_SECONDS:
        raise ValueError(f"bare_unit must be one of {sorted(UNIT_SECONDS)}, found {bare_unit!r}")
    match = _DURATION.fullmatch(str(text))
    if not match:
        raise DurationError(
            f"expected a duration such as 30s, 500ms, 2m or 1h (a bare number is "
            f"{'milliseconds' if bare_unit == 'ms' else 'seconds'}), found {text!r}"
        )
    seconds = float(match.group(1)) * UNIT_SECONDS[match.group(2) or bare_unit]
    if not math.isfinite(seconds) or seconds < 0 or (seconds == 0 and not allow_zero):
        raise DurationError(
            f"expected a duration {'>= 0' if allow_zero else '> 0'}, found {text!r}"
        )
    return seconds


def parse_ms(text: str, *, bare_unit: str = "s", allow_zero: bool = False) -> int:
    """:func:`parse_seconds` in whole milliseconds (rounded; at least 1 ms when not zero)."""
    seconds = parse_seconds(text, bare_unit=bare_unit, allow_zero=allow_zero)
    millis = round(seconds * 1000)
    return max(millis, 1) if seconds > 0 else 0


def format_duration(seconds: float) -> str:
    """The shortest exact spelling of ``seconds`` in this syntax (``90`` → ``"90s"``,
    ``0.5`` → ``"500ms"``, ``300`` → ``"5m"``), for help texts and logs."""
    if seconds and seconds % 3600 == 0:
        return f"{seconds / 3600:g}h"
    if seconds and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    if seconds >= 1 or seconds == 0:
        return f"{seconds:g}s"
    return f"{seconds * 1000:g}ms"
