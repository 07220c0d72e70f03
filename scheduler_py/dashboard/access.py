"""Who may read the dashboard: with ``scheduler-py dashboard --require-token`` (docker-compose
sets it), every page and API request needs the dashboard's token; without it the pages and
the read-only API are open to whoever reaches the port (127.0.0.1 by default).

A request is let through when it carries

- ``Authorization: Bearer <token>`` (scripts, ``curl``, the compose test), or
- the session cookie that ``POST /login`` sets for the right token (a browser;
  ``scheduler_py/dashboard/token.py``: the cookie holds an HMAC under the token, never the
  token, and is ``HttpOnly`` and ``SameSite=Strict``).

Open to everyone: the static files (``/static/…``: the pages' JavaScript, CSS and vendored
libraries, the same for every installation) and the login page. Anything else without a
credential gets 401 with ``WWW-Authenticate: Bearer`` and a message naming what is expected:
JSON under ``/api/``, the login page elsewhere. Changing requests (apply, trigger pause and
resume) still need the bearer token in ``scheduler_py/dashboard/api.py`` — a session cookie
only reads.
"""

from __future__ import annotations

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    jsonify,
    make_response,
    redirect,
    render_template,
    request,
)
from flask.typing import ResponseReturnValue

from scheduler_py.dashboard.token import (
    SESSION_COOKIE,
    bearer_matches,
    session_matches,
    session_value,
)

access = Blueprint("access", __name__, template_folder="templates")

OPEN_ENDPOINTS = frozenset({"pages.static", "access.login", "access.log_in"})
"""endpoints answered without a credential"""
REALM = 'Bearer realm="scheduler-py dashboard"'
EXPECTED = (
    "this dashboard answers only requests that carry its token (scheduler-py dashboard "
    "--require-token): expected the header `Authorization: Bearer <the token in the "
    "dashboard's --token-file>` or the session cookie /login sets"
)


def require_token(app: Flask, token: str) -> None:
    """Make every request to ``app`` but :data:`OPEN_ENDPOINTS` need ``token`` (or its session
    cookie), and serve the login page."""
    app.register_blueprint(access)
    app.extensions["scheduler_py_read_token"] = token

    @app.before_request
    def _needs_token() -> ResponseReturnValue | None:
        if request.endpoint in OPEN_ENDPOINTS:
            return None
        header = request.headers.get("Authorization")
        if bearer_matches(header, token):
            return None
        if session_matches(request.cookies.get(SESSION_COOKIE), token):
            return None
        if header:
            found = "an Authorization header without this token"
        elif request.cookies.get(SESSION_COOKIE):
            found = "a session cookie of another token"
        else:
            found = "neither"
        message = f"{EXPECTED}; found {found}"
        if request.path.startswith("/api/"):
            return _unauthorized(jsonify({"error": f"401 Unauthorized: {message}"}))
        return _unauthorized(_login_page(message, _next()))


def _unauthorized(response: Response) -> Response:
    response.status_code = 401
    response.headers["WWW-Authenticate"] = REALM
    return response


def _login_page(message: str, target: str) -> Response:
    return make_response(render_template("login.html", message=message, next=target))


def _next(value: str | None = None) -> str:
    """Where to go after logging in: a path of this dashboard, never another site."""
    target = value if value is not None else request.full_path.rstrip("?")
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


@access.get("/login")
def login() -> ResponseReturnValue:
    return _login_page("", _next(request.args.get("next", "/")))


@access.post("/login")
def log_in() -> ResponseReturnValue:
    token = current_app.extensions["scheduler_py_read_token"]
    given = (request.form.get("token") or "").strip()
    target = _next(request.form.get("next", "/"))
    if not bearer_matches(f"Bearer {given}", token):
        found = "none" if not given else "a different one"
        message = f"expected the token in the dashboard's --token-file, found {found}"
        return _unauthorized(_login_page(message, target))
    response = redirect(target, code=303)
    response.set_cookie(
        SESSION_COOKIE, session_value(token), httponly=True, samesite="Strict", path="/"
    )
    return response
