"""The dashboard's Flask application (``scheduler-py dashboard`` runs it); with
``reads_need_token`` every request but the static files and the login page needs the token
(``scheduler_py/dashboard/access.py``)."""

from __future__ import annotations

from flask import Flask, jsonify, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from scheduler_py.dashboard.access import require_token
from scheduler_py.dashboard.api import api
from scheduler_py.dashboard.limits import MAX_BODY_BYTES
from scheduler_py.dashboard.pages import pages
from scheduler_py.dashboard.sources import Sources


def create_app(sources: Sources, reads_need_token: bool = False) -> Flask:
    if reads_need_token and sources.token is None:
        raise ValueError(
            "reads_need_token (dashboard --require-token) needs the token of --token-file; "
            "expected one, found none"
        )
    app = Flask(__name__, static_folder=None)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES  # scheduler_py/dashboard/limits.py
    app.extensions["scheduler_py_sources"] = sources
    app.register_blueprint(api)
    app.register_blueprint(pages)
    if reads_need_token and sources.token is not None:  # first: before a body is read
        require_token(app, sources.token)

    @app.before_request
    def _bounded_body() -> None:
        """A body over the limit is refused before any handler runs, also on routes that
        do not read it; one sent without a length is cut off at the limit while read."""
        if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
            raise RequestEntityTooLarge(
                f"the request body has {request.content_length} bytes; the dashboard takes at "
                f"most {MAX_BODY_BYTES}"
            )
        if request.method in ("POST", "PUT", "PATCH"):
            request.get_data(cache=True)

    @app.errorhandler(HTTPException)
    def _http_error(problem: HTTPException) -> ResponseReturnValue:
        if request.path.startswith("/api/"):
            return jsonify({"error": f"{problem.code} {problem.name}: {problem.description}"}), (
                problem.code or 500
            )
        return problem

    return app
