"""The HTML pages: server-rendered shells that poll the JSON API (``static/dashboard.js``).
Without a token (``Sources.token``, ``scheduler_py/dashboard/sources.py``) the pages render
their mutating controls (pause/resume, apply) disabled and say the dashboard is read-only."""

from __future__ import annotations

from flask import Blueprint, current_app, render_template
from flask.typing import ResponseReturnValue

pages = Blueprint("pages", __name__, template_folder="templates", static_folder="static")

POLL_MS = 5000
NAV = (
    ("cluster", "/", "Cluster"),
    ("decisions", "/decisions", "Decisions"),
    ("whatif", "/whatif", "What-if"),
    ("algorithms", "/algorithms", "Algorithms"),
)


def _page(name: str, **context: str) -> ResponseReturnValue:
    read_only = current_app.extensions["scheduler_py_sources"].token is None
    return render_template(
        f"{name}.html", page=name, nav=NAV, poll_ms=POLL_MS, read_only=read_only, **context
    )


@pages.get("/")
def cluster() -> ResponseReturnValue:
    return _page("cluster")


@pages.get("/topology/<topology>")
def topology(topology: str) -> ResponseReturnValue:
    return _page("topology", topology=topology)


@pages.get("/decisions")
def decisions() -> ResponseReturnValue:
    return _page("decisions")


@pages.get("/whatif")
def whatif() -> ResponseReturnValue:
    return _page("whatif")


@pages.get("/algorithms")
def algorithms() -> ResponseReturnValue:
    return _page("algorithms")
