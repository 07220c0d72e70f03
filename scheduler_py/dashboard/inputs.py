"""Checks of request parameters: a bad one raises :class:`BadRequest` naming the field, what
was expected and what was found (the API answers 400 with them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler_py.algorithms import registry
from scheduler_py.config import ConfigValueError, coerce

MAX_LIMIT = 10_000
MAX_PAIRS = 1_000_000


class BadRequest(Exception):
    def __init__(self, field: str, expected: str, found: Any) -> None:
        shown = repr(found)
        self.field = field
        self.expected = expected
        self.found = shown if len(shown) <= 80 else shown[:77] + "..."
        super().__init__(f"{field}: expected {expected}, found {self.found}")


def limit_arg(args: Mapping[str, str], default: int = 200) -> int:
    """The ``limit`` query parameter: an integer from 1 to :data:`MAX_LIMIT`."""
    return _int_arg(args, "limit", default, 1, MAX_LIMIT)


def pairs_arg(args: Mapping[str, str], default: int) -> int:
    """The ``pairs`` query parameter (executor pairs shown): an integer from 0 to
    :data:`MAX_PAIRS`."""
    return _int_arg(args, "pairs", default, 0, MAX_PAIRS)


def _int_arg(args: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = args.get(name)
    if raw is None:
        return default
    expected = f"an integer from {low} to {high}"
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(name, expected, raw) from None
    if not low <= value <= high:
        raise BadRequest(name, expected, raw)
    return value


def trigger_request(body: Any) -> str | None:
    """The topology of a trigger pause/resume body ``{"topology": "name"}``; ``None`` (every
    topology) for an empty body or no ``topology``."""
    if body is None or body == {}:
        return None
    if not isinstance(body, dict):
        raise BadRequest("body", 'a JSON object like {"topology": "wordcount"} or none', body)
    unknown = sorted(set(body) - {"topology"})
    if unknown:
        raise BadRequest(unknown[0], "only the field topology", unknown[0])
    topology = body.get("topology")
    if topology is not None and (not isinstance(topology, str) or not topology.strip()):
        raise BadRequest(
            "topology", "a topology name or id (or no field: every topology)", topology
        )
    return topology


def plan_request(body: Any) -> tuple[str, dict[str, Any]]:
    """``(algorithm, params)`` of a what-if or apply body ``{"algorithm": ..., "params": {...}}``;
    ``algorithm`` may be empty (the topology's configured one), then ``params`` must be empty."""
    if not isinstance(body, dict):
        raise BadRequest("body", 'a JSON object like {"algorithm": "td", "params": {}}', body)
    unknown = sorted(set(body) - {"algorithm", "params"})
    if unknown:
        raise BadRequest(unknown[0], "only the fields algorithm and params", unknown[0])
    algorithm = body.get("algorithm", "")
    params = body.get("params", {})
    known = registry.algorithms()
    if not isinstance(algorithm, str) or (algorithm and algorithm not in known):
        raise BadRequest("algorithm", f"one of {', '.join(known)} (or empty)", algorithm)
    if not isinstance(params, dict):
        raise BadRequest("params", "a JSON object of parameter names to values", params)
    if params and not algorithm:
        raise BadRequest("algorithm", "an algorithm name when params are given", algorithm)
    return algorithm, _coerced(known[algorithm], params) if params else {}


def _coerced(info: registry.AlgorithmInfo, params: Mapping[str, Any]) -> dict[str, Any]:
    result = {}
    for key, value in params.items():
        field = f"params.{key}"
        if key not in info.params:
            expected = f"a parameter of {info.name}: {', '.join(info.params) or '(none)'}"
            raise BadRequest(field, expected, key)
        default = info.params[key][0]
        if value is None or isinstance(value, dict | list):
            raise BadRequest(field, f"a value like the default {default!r}", value)
        try:
            result[key] = coerce(field, value, default)
        except ConfigValueError:
            raise BadRequest(field, f"a value like the default {default!r}", value) from None
    return result
