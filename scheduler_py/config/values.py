"""Typed values from text: the one coercer and the one ``KEY=VALUE`` parser.

Algorithm parameters (``--param``, ``scheduler.brain.params``), reconfiguration settings
(``--reconfig``, ``scheduler.reconfig.*``), aggregation options and benchmark settings all
arrive as text or loosely typed JSON; each is converted to the type of its default here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")


class ConfigValueError(ValueError):
    """A value that does not fit the type or range its setting expects."""


def coerce(
    name: str,
    value: Any,
    default: Any,
    *,
    minimum: float | None = None,
    finite: bool = True,
) -> Any:
    """``value`` converted to the type of ``default``.

    ``None`` defaults accept anything; booleans accept the words of :data:`TRUE_WORDS` and
    :data:`FALSE_WORDS`; numbers must be finite (unless ``finite`` is false) and at least
    ``minimum`` when given. Raises :class:`ConfigValueError` naming ``name``, the expected
    type and what was found.
    """
    if default is None or value is None:
        return value
    kind = type(default)
    try:
        if isinstance(default, bool):
            result: Any = _boolean(value)
        elif isinstance(default, str):
            return str(value).strip()
        elif isinstance(default, int):
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            result = int(str(value).strip()) if not isinstance(value, int) else int(value)
        elif isinstance(default, float):
            result = float(str(value).strip()) if not isinstance(value, int | float) else value
            result = float(result)
            if finite and not math.isfinite(result):
                raise ValueError(value)
        elif isinstance(value, kind):
            return value
        else:
            result = kind(value)
    except (TypeError, ValueError):
        expected = _describe(kind, minimum)
        raise ConfigValueError(f"{name} expects {expected}, found {value!r}") from None
    if minimum is not None and not isinstance(result, bool) and result < minimum:
        raise ConfigValueError(f"{name} expects {_describe(kind, minimum)}, found {value!r}")
    return result


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in TRUE_WORDS:
            return True
        if lowered in FALSE_WORDS:
            return False
    raise ValueError(value)


def _describe(kind: type, minimum: float | None) -> str:
    names = {bool: "true or false", int: "a whole number", float: "a number", str: "text"}
    text = names.get(kind, f"a {kind.__name__}")
    if minimum is not None and kind is not bool:
        text += f" of at least {minimum:g}"
    return text


def parse_key_values(items: Iterable[str], option: str) -> dict[str, str]:
    """``["a=1", "b = x"]`` → ``{"a": "1", "b": "x"}``; ``option`` names the flag in errors."""
    result: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigValueError(f"{option} expects KEY=VALUE, found {item!r}")
        result[key.strip()] = value.strip()
    return result
