"""The OpenAPI 3 document of the dashboard's JSON API, served at ``/api/v1/openapi.json``.

Every route of :mod:`scheduler_py.dashboard.api` is described here; the tests check that the
two agree (``tests/test_dashboard_openapi.py``).
"""

from __future__ import annotations

from typing import Any

from scheduler_py import __version__
from scheduler_py.dashboard.inputs import MAX_LIMIT, MAX_PAIRS, PARAM_CAPS
from scheduler_py.dashboard.limits import (
    MAX_BODY_BYTES,
    MAX_JSON_DEPTH,
    MAX_WHATIF_IN_FLIGHT,
    WHATIF_BUDGET_SECS,
)
from scheduler_py.dashboard.topology_view import MAX_PAIRS as DEFAULT_PAIRS

_ERROR = {"$ref": "#/components/schemas/Error"}
_OBJECT = {"type": "object", "additionalProperties": True}


def _response(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": schema or _OBJECT}},
    }


_ERRORS = {
    "400": _response("a malformed parameter (the `field` is named)", _ERROR),
    "404": _response("no such topology", _ERROR),
    "503": _response("the brain cannot be reached; what the dashboard has is included", _ERROR),
}
_BODY_TOO_LARGE = _response(f"the request body is over {MAX_BODY_BYTES} bytes", _ERROR)
_WHATIF_LIMITS = {
    "413": _BODY_TOO_LARGE,
    "429": _response(
        f"{MAX_WHATIF_IN_FLIGHT} what-ifs already run (header `Retry-After`: seconds)", _ERROR
    ),
    "504": _response(
        f"the what-if took longer than its budget of {WHATIF_BUDGET_SECS:g}s "
        "(header `Retry-After`)",
        _ERROR,
    ),
}
_CAPS = ", ".join(f"`{key}` <= {cap:g}" for key, cap in PARAM_CAPS.items())
_TOPOLOGY = {
    "name": "topology",
    "in": "path",
    "required": True,
    "description": "a running topology's id or name",
    "schema": {"type": "string", "minLength": 1},
}
_LIMIT = {
    "name": "limit",
    "in": "query",
    "required": False,
    "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
}
_PAIRS = {
    "name": "pairs",
    "in": "query",
    "required": False,
    "description": "executor pairs in `edges` and `matrix`: the busiest by tuples/s "
    f"(default {DEFAULT_PAIRS}); `pairs_total` counts all of them and `component_matrix` "
    "sums all of them per component pair",
    "schema": {"type": "integer", "minimum": 0, "maximum": MAX_PAIRS},
}
_PLAN_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PlanRequest"}}},
}


def _get(summary: str, parameters: list[dict[str, Any]], *codes: str) -> dict[str, Any]:
    return {
        "get": {
            "summary": summary,
            "parameters": parameters,
            "responses": {"200": _response("OK")} | {c: _ERRORS[c] for c in codes},
        }
    }


def _trigger(summary: str, apply_errors: dict[str, Any]) -> dict[str, Any]:
    responses = {"200": _response("the trigger's state (as in /cluster's `trigger`)")}
    responses |= {c: _ERRORS[c] for c in ("400", "503")} | apply_errors
    responses["409"] = _response("the brain refused (no controller, unknown topology)", _ERROR)
    return {
        "post": {
            "summary": summary,
            "requestBody": {
                "required": False,
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/TriggerRequest"}}
                },
            },
            "security": [{"bearer": []}],
            "responses": responses,
        }
    }


def document() -> dict[str, Any]:
    apply_errors = {
        "401": _response("missing or wrong bearer token", _ERROR),
        "403": _response("no token configured: the dashboard is read-only", _ERROR),
        "409": _response("the brain refused the re-plan (the message says why)", _ERROR),
    }
    plan_responses = {"200": _response("the brain's re-plan report")} | _ERRORS
    plan_responses["409"] = apply_errors["409"]
    plan_responses["413"] = _BODY_TOO_LARGE
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "scheduler-py dashboard",
            "version": __version__,
            "description": "Read the brain's cluster view, placements, traffic and decisions; "
            "dry-run and apply re-plans; pause and resume the automatic trigger. Mutating requests "
            "need `Authorization: Bearer TOKEN`.",
        },
        "servers": [{"url": "/api/v1"}],
        "paths": {
            "/cluster": _get("supervisors, racks, slots, CPU and the brain's health", [], "503"),
            "/topologies": _get("running topologies", [], "503"),
            "/topologies/{topology}": _get(
                "placement, edges, traffic matrices and cost basis",
                [_TOPOLOGY, _PAIRS],
                "400",
                "404",
                "503",
            ),
            "/decisions": _get(
                "plan log and reconfiguration history, newest first",
                [
                    _LIMIT,
                    {
                        "name": "topology",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string"},
                    },
                ],
                "400",
                "404",
            ),
            "/algorithms": _get("registered algorithms with parameters and papers", []),
            "/topologies/{topology}/whatif": {
                "post": {
                    "summary": "dry-run re-plan beside the running placement",
                    "description": f"No credential needed, so bounded: at most "
                    f"{MAX_WHATIF_IN_FLIGHT} at once, {WHATIF_BUDGET_SECS:g}s each, a body of "
                    f"{MAX_BODY_BYTES} bytes nested {MAX_JSON_DEPTH} levels, and parameters "
                    f"capped: {_CAPS}.",
                    "parameters": [_TOPOLOGY],
                    "requestBody": _PLAN_BODY,
                    "responses": plan_responses | _WHATIF_LIMITS,
                }
            },
            "/topologies/{topology}/apply": {
                "post": {
                    "summary": "re-plan and reconfigure through the brain's drain-out path",
                    "parameters": [_TOPOLOGY],
                    "requestBody": _PLAN_BODY,
                    "security": [{"bearer": []}],
                    "responses": plan_responses | apply_errors,
                }
            },
            "/trigger/pause": _trigger(
                "pause the brain's automatic reconfiguration trigger for one topology (body "
                '`{"topology": name}`) or every topology (no body); in memory, or in the '
                "brain's --state-dir when it has one",
                apply_errors,
            ),
            "/trigger/resume": _trigger(
                "resume the automatic trigger for one topology, or (no body) clear every pause",
                apply_errors,
            ),
            "/openapi.json": _get("this document", []),
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {"type": "string"},
                        "field": {"type": "string"},
                        "expected": {"type": "string"},
                        "found": {"type": "string"},
                    },
                },
                "TriggerRequest": {
                    "type": "object",
                    "properties": {"topology": {"type": "string", "minLength": 1}},
                    "additionalProperties": False,
                },
                "PlanRequest": {
                    "type": "object",
                    "properties": {
                        "algorithm": {"type": "string"},
                        "params": {"type": "object", "additionalProperties": True},
                    },
                    "additionalProperties": False,
                },
            },
        },
    }
