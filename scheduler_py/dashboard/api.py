"""The JSON API under ``/api/v1`` (described by :mod:`scheduler_py.dashboard.openapi`).

Status codes: 400 a malformed parameter (the body names the field, what was expected and
what was found), 401/403 the token rules of :mod:`scheduler_py.dashboard.token`, 404 an
unknown topology, 409 the brain refused, 413 a body over the limit, 429 every what-if slot
taken and 504 a what-if over its time budget (both with ``Retry-After``; the limits:
:mod:`scheduler_py.dashboard.limits`), 503 the brain unreachable with nothing cached.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from scheduler_py.algorithms import registry
from scheduler_py.dashboard import cluster_view, decisions_view, openapi, topology_view
from scheduler_py.dashboard.cache import BrainReading
from scheduler_py.dashboard.inputs import (
    BadRequest,
    json_body,
    limit_arg,
    pairs_arg,
    plan_request,
    trigger_request,
)
from scheduler_py.dashboard.limits import RETRY_AFTER_SECS, Busy, OverBudget
from scheduler_py.dashboard.sources import Sources
from scheduler_py.dashboard.token import bearer_matches
from scheduler_py.scheduling.dashboard_ports import SourceUnavailable
from scheduler_py.scheduling.interfaces import OperatorError

api = Blueprint("api", __name__, url_prefix="/api/v1")


def _sources() -> Sources:
    return current_app.extensions["scheduler_py_sources"]


def error(code: int, message: str, **extra: Any) -> ResponseReturnValue:
    return jsonify({"error": message} | extra), code


@api.errorhandler(BadRequest)
def _bad_request(problem: BadRequest) -> ResponseReturnValue:
    return error(
        400, str(problem), field=problem.field, expected=problem.expected, found=problem.found
    )


def _reading_or_503() -> tuple[BrainReading | None, ResponseReturnValue | None]:
    """The brain's reading for this request (read once, so its parts agree), or a 503 when
    the brain has never answered."""
    sources = _sources()
    reading = sources.reading()
    if reading.status is None:
        health = cluster_view.brain_health(reading, sources.clock())
        message = f"the brain at {sources.brain.address} cannot be reached: {reading.error}"
        return None, error(503, message, brain=health)
    return reading, None


@api.get("/openapi.json")
def openapi_document() -> ResponseReturnValue:
    return jsonify(openapi.document())


@api.get("/cluster")
def cluster() -> ResponseReturnValue:
    sources = _sources()
    reading = sources.reading()
    aggregates, errors = {}, set()
    for topology in (reading.status or {}).get("topologies", []):
        aggregates[topology["id"]], problem = sources.aggregate(topology["id"])
        errors.add(problem)
    body = cluster_view.cluster(reading, aggregates, sources.clock())
    body["aggregates_error"] = "; ".join(sorted(e for e in errors if e)) or None
    if reading.status is None:
        message = f"the brain at {sources.brain.address} cannot be reached: {reading.error}"
        return jsonify(body | {"error": message}), 503
    return jsonify(body)


@api.get("/topologies")
def topologies() -> ResponseReturnValue:
    reading, unavailable = _reading_or_503()
    if reading is None:
        return unavailable
    status = reading.status or {}
    return jsonify(
        {
            "brain": reading.health,
            "topologies": [topology_view.summary(t) for t in status.get("topologies", [])],
        }
    )


def _topology_or_error(
    key: str,
) -> tuple[BrainReading | None, Mapping[str, Any] | None, ResponseReturnValue | None]:
    """``(reading, topology, None)``, or ``(None, None, the 503 or 404 answer)``."""
    reading, unavailable = _reading_or_503()
    if reading is None:
        return None, None, unavailable
    status = reading.status or {}
    found = topology_view.find(status, key)
    if found is None:
        running = ", ".join(sorted(t["name"] for t in status.get("topologies", []))) or "none"
        return (
            None,
            None,
            error(404, f"no running topology named or identified {key!r}; running: {running}"),
        )
    return reading, found, None


@api.get("/topologies/<topology>")
def topology(topology: str) -> ResponseReturnValue:
    max_pairs = pairs_arg(request.args, topology_view.MAX_PAIRS)
    reading, found, problem = _topology_or_error(topology)
    if reading is None or found is None:
        return problem
    sources = _sources()
    status = reading.status or {}
    hosts = {s["id"]: s["host"] for s in status.get("supervisors", [])}
    for blacklisted in status.get("blacklisted_supervisors") or []:
        hosts.setdefault(blacklisted["id"], f"{blacklisted['host']} (blacklisted)")
    aggregate, aggregate_error = sources.aggregate(found["id"])
    body = topology_view.detail(found, hosts, aggregate, sources.clock(), max_pairs)
    return jsonify(body | {"brain": reading.health, "aggregate_error": aggregate_error})


@api.get("/decisions")
def decisions() -> ResponseReturnValue:
    sources = _sources()
    limit = limit_arg(request.args)
    wanted = request.args.get("topology")
    status = sources.reading().status
    names = {t["id"]: t["name"] for t in (status or {}).get("topologies", [])}
    plans, plan_error = sources.plans(limit)
    if wanted is not None:
        ids = {i for i, n in names.items() if wanted in (i, n)} | {wanted}
        plans = [p for p in plans if p.get("topology_id") in ids]
        if status is not None and not plans and not (ids & set(names)):
            return error(404, f"no topology {wanted!r} is running or in the plan log")
    targets = [names.get(i, i) for i in ids] if wanted is not None else list(names.values())
    histories, history_error = [], None
    for name in sorted(set(targets)):
        try:
            histories.extend(sources.brain.history(name))
        except (SourceUnavailable, OperatorError) as problem:
            history_error = str(problem)
    return jsonify(
        {
            "items": decisions_view.timeline(plans, histories, limit),
            "plan_log_error": plan_error,
            "history_error": history_error,
            "trigger": (status or {}).get("trigger"),
        }
    )


@api.get("/algorithms")
def algorithms() -> ResponseReturnValue:
    return jsonify(
        {
            "algorithms": [
                {
                    "name": info.name,
                    "paper": info.paper,
                    "summary": info.summary,
                    "params": [
                        {"name": key, "default": default, "description": text}
                        for key, (default, text) in info.params.items()
                    ],
                }
                for info in registry.algorithms().values()
            ]
        }
    )


@api.post("/topologies/<topology>/whatif")
def whatif(topology: str) -> ResponseReturnValue:
    return _replan(topology, dry_run=True)


def _unauthorised(action: str) -> ResponseReturnValue | None:
    """The 403 (no token configured) or 401 (missing or wrong bearer token) answer to a
    mutating request, or ``None`` when it may go ahead."""
    token = _sources().token
    if token is None:
        return error(
            403,
            "the dashboard is read-only: no token configured; start it with --token-file PATH "
            f"to allow {action}",
        )
    if not bearer_matches(request.headers.get("Authorization"), token):
        return error(
            401,
            f"{action} needs the header `Authorization: Bearer TOKEN` with the token "
            "in the dashboard's --token-file; it was missing or different",
        )
    return None


@api.post("/topologies/<topology>/apply")
def apply(topology: str) -> ResponseReturnValue:
    refused = _unauthorised("applying plans")
    if refused is not None:
        return refused
    return _replan(topology, dry_run=False)


@api.post("/trigger/pause")
def trigger_pause() -> ResponseReturnValue:
    return _trigger("pause")


@api.post("/trigger/resume")
def trigger_resume() -> ResponseReturnValue:
    return _trigger("resume")


def _trigger(action: str) -> ResponseReturnValue:
    """Pause or resume the brain's automatic reconfiguration trigger (body: optional
    ``{"topology": name}``; without it, every topology; a resume then clears every pause)."""
    refused = _unauthorised("pausing or resuming the trigger")
    if refused is not None:
        return refused
    body = json_body(request.get_data(), 'a JSON object like {"topology": "wordcount"} or none')
    topology = trigger_request(body)
    try:
        state = _sources().brain.set_trigger_paused(action == "pause", topology)
    except SourceUnavailable as unreachable:
        return error(503, str(unreachable))
    except OperatorError as refused_by_brain:
        return error(409, f"the brain refused: {refused_by_brain}")
    # the next status read must not be the one cached before the change (a page would show
    # the old state again and its button would repeat the action)
    _sources().cache.invalidate()
    return jsonify({"action": action, "topology": topology, "trigger": dict(state)})


def _replan(key: str, dry_run: bool) -> ResponseReturnValue:
    raw = request.get_data()
    expected = 'a JSON object like {"algorithm": "td", "params": {}}'
    body = json_body(raw, expected) if raw.strip() else {}
    algorithm, params = plan_request(body)
    _, found, problem = _topology_or_error(key)
    if found is None:
        return problem
    sources = _sources()

    def ask_brain() -> Mapping[str, Any]:
        return sources.brain.replan(found["name"], algorithm, params, dry_run)

    try:
        # a what-if needs no credential: bounded in number and time (dashboard/limits.py)
        report = sources.whatif.run(ask_brain) if dry_run else ask_brain()
    except Busy as busy:
        return _retry_later(429, str(busy))
    except OverBudget as late:
        return _retry_later(504, str(late))
    except SourceUnavailable as unreachable:
        return error(503, str(unreachable))
    except OperatorError as refused:
        return error(409, f"the brain refused: {refused}")
    running = topology_view.summary(found) | {
        "plan_summary": (found.get("decision") or {}).get("summary", {})
    }
    return jsonify({"dry_run": dry_run, "running": running, "proposal": dict(report)})


def _retry_later(code: int, message: str) -> ResponseReturnValue:
    response = jsonify({"error": message, "retry_after_secs": RETRY_AFTER_SECS})
    response.headers["Retry-After"] = str(RETRY_AFTER_SECS)
    return response, code
