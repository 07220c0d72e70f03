"""Checks of request parameters: a bad one raises :class:`BadRequest` naming the field, what
was expected and what was found (the API answers 400 with them).

What-if and apply parameters that set how long an algorithm may search are capped
(:data:`PARAM_CAPS`; why a what-if is bounded: ``scheduler_py/dashboard/limits.py``): a value
above its cap, infinite or not a number is a 400 naming the cap.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scheduler_py.algorithms import registry
from scheduler_py.config import ConfigValueError, coerce
from scheduler_py.dashboard.limits import MAX_JSON_DEPTH

MAX_LIMIT = 10_000
MAX_PAIRS = 1_000_000
PARAM_CAPS: Mapping[str, float] = {
    "seconds": 10.0,  # auto, links: search time (default 5, 2)
    "time_limit": 10.0,  # albic, optimal: search time (default 10, 30)
    "max_evaluations": 1_000_000,  # tdls: plans scored (default 200,000)
    "max_rounds": 100,  # tdls: perturbation rounds (default 20)
    "max_tries": 64,  # metis: partitionings tried (default 8)
    "dp_budget": 10_000_000,  # optimal: dynamic-programming steps (default 1,000,000)
    "dp_max_states": 1_000_000,  # optimal: states kept (default 200,000)
}
"""parameter -> the largest value a what-if or apply may ask for (any algorithm having it)"""


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


def json_body(raw: bytes, expected: str) -> Any:
    """The JSON document of a request body (``None`` when empty); a body that is not UTF-8
    JSON, or nests arrays and objects deeper than :data:`MAX_JSON_DEPTH`, is a
    :class:`BadRequest` (``expected`` describes a good one)."""
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("body", f"UTF-8 JSON: {expected}", raw[:40]) from None
    depth = nesting_depth(text)
    if depth > MAX_JSON_DEPTH:
        found = f"JSON nested {depth} levels deep"
        raise BadRequest("body", f"JSON nested at most {MAX_JSON_DEPTH} levels: {expected}", found)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise BadRequest("body", f"JSON: {expected}", text) from None


def nesting_depth(text: str, stop_above: int = MAX_JSON_DEPTH) -> int:
    """How deep arrays and objects nest in JSON ``text`` (brackets inside strings do not
    count); counting stops once it passes ``stop_above``."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_above:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


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
        cap = PARAM_CAPS.get(key)
        if cap is not None and not result[key] <= cap:  # also NaN
            raise BadRequest(field, f"at most {cap:g} (the dashboard's cap)", value)
    return result
