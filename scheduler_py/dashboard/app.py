"""The dashboard's Flask application (``scheduler-py dashboard`` runs it)."""

from __future__ import annotations

from flask import Flask, jsonify, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException

from scheduler_py.dashboard.api import api
from scheduler_py.dashboard.pages import pages
from scheduler_py.dashboard.sources import Sources


def create_app(sources: Sources) -> Flask:
    app = Flask(__name__, static_folder=None)
    app.extensions["scheduler_py_sources"] = sources
    app.register_blueprint(api)
    app.register_blueprint(pages)

    @app.errorhandler(HTTPException)
    def _http_error(problem: HTTPException) -> ResponseReturnValue:
        if request.path.startswith("/api/"):
            return jsonify({"error": f"{problem.code} {problem.name}: {problem.description}"}), (
                problem.code or 500
            )
        return problem

    return app
