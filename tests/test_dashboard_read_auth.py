"""``scheduler-py dashboard --require-token``: every page and API request needs the token
(``Authorization: Bearer`` or the session cookie ``/login`` sets), only the static files and
the login page are open (scheduler_py/dashboard/access.py). Without the option reading stays
open, as before. The dashboard as a client of a brain with ``--require-auth-reads``
(scheduler_py/cli/dashboard.py ``ThriftBrain``)."""

from __future__ import annotations

import pytest

from scheduler_py.dashboard.app import create_app
from scheduler_py.dashboard.sources import Sources
from scheduler_py.dashboard.token import SESSION_COOKIE, session_value
from tests.dashboard_fakes import TOKEN, Clock, FakeBrain

READS = (
    "/",
    "/topology/wc",
    "/decisions",
    "/whatif",
    "/algorithms",
    "/api/v1/cluster",
    "/api/v1/topologies",
    "/api/v1/topologies/wc",
    "/api/v1/decisions",
    "/api/v1/algorithms",
    "/api/v1/openapi.json",
    "/no/such/page",
)


def _client(require: bool = True, token: str | None = TOKEN):
    brain = FakeBrain()
    app = create_app(Sources(brain, None, None, token, Clock()), reads_need_token=require)
    return app.test_client(), brain


@pytest.mark.parametrize("path", READS)
def test_every_read_without_the_token_is_401_naming_what_is_expected(path):
    client, _ = _client()
    response = client.get(path)
    assert response.status_code == 401, path
    assert response.headers["WWW-Authenticate"].startswith("Bearer ")
    if path.startswith("/api/"):
        message = response.get_json()["error"]
        assert "Authorization: Bearer" in message and "--require-token" in message
        assert "found neither" in message
    else:
        page = response.get_data(as_text=True)
        assert 'action="/login"' in page and "--require-token" in page
        assert "supervisor" not in page.lower()


def test_a_wrong_token_or_cookie_is_401_and_says_what_it_found():
    client, _ = _client()
    response = client.get("/api/v1/cluster", headers={"Authorization": "Bearer not-it"})
    assert response.status_code == 401
    assert "found an Authorization header without this token" in response.get_json()["error"]
    client.set_cookie(SESSION_COOKIE, session_value("another token"))
    response = client.get("/api/v1/cluster")
    assert response.status_code == 401
    assert "session cookie of another token" in response.get_json()["error"]
    client.set_cookie(SESSION_COOKIE, TOKEN)  # the token itself is not the cookie
    assert client.get("/api/v1/cluster").status_code == 401


def test_the_bearer_token_reads_everything():
    client, _ = _client()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for path in READS[:-1]:
        assert client.get(path, headers=headers).status_code == 200, path
    assert client.get("/no/such/page", headers=headers).status_code == 404


def test_static_files_and_the_login_page_are_open():
    client, _ = _client()
    for path in ("/static/dashboard.js", "/static/dashboard.css", "/login"):
        response = client.get(path)
        assert response.status_code == 200, path
        response.close()


def test_login_sets_a_session_cookie_that_reads_but_never_holds_the_token():
    client, _ = _client()
    response = client.post("/login", data={"token": TOKEN, "next": "/decisions"})
    assert response.status_code == 303 and response.headers["Location"].endswith("/decisions")
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}={session_value(TOKEN)};")
    assert TOKEN not in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    for path in READS[:-1]:
        assert client.get(path).status_code == 200, path


def test_the_session_cookie_does_not_authorise_a_change():
    client, brain = _client()
    client.post("/login", data={"token": TOKEN})
    body = {"algorithm": "td", "params": {}}
    response = client.post("/api/v1/topologies/wc/apply", json=body)
    assert response.status_code == 401, response.get_json()
    assert client.post("/api/v1/trigger/pause", json={}).status_code == 401
    assert brain.calls == [] and brain.trigger_calls == []
    headers = {"Authorization": f"Bearer {TOKEN}"}
    response = client.post("/api/v1/topologies/wc/apply", json=body, headers=headers)
    assert response.status_code == 200, response.get_json()


@pytest.mark.parametrize("given, found", [("", "found none"), ("guess", "found a different one")])
def test_a_wrong_login_is_401_and_sets_no_cookie(given, found):
    client, _ = _client()
    response = client.post("/login", data={"token": given})
    assert response.status_code == 401
    assert "Set-Cookie" not in response.headers
    assert found in response.get_data(as_text=True)
    assert client.get("/api/v1/cluster").status_code == 401


@pytest.mark.parametrize("target", ["//evil.example/", "https://evil.example/", "\\\\evil", "x"])
def test_login_never_redirects_to_another_site(target):
    client, _ = _client()
    response = client.post("/login", data={"token": TOKEN, "next": target})
    assert response.status_code == 303
    assert response.headers["Location"] in ("/", "http://localhost/")


def test_without_the_option_reading_stays_open():
    client, _ = _client(require=False)
    for path in READS[:-1]:
        assert client.get(path).status_code == 200, path


def test_the_option_needs_a_token():
    with pytest.raises(ValueError, match="--token-file"):
        _client(require=True, token=None)


def test_the_dashboard_reads_a_brain_that_requires_the_secret(tmp_path, monkeypatch):
    """``ThriftBrain`` against a real brain started with reads_need_secret: status, history
    and a what-if go through with the secret the dashboard reads; without one, the brain's
    refusal reaches the dashboard as an OperatorError naming the option."""
    from scheduler_py.cli.dashboard import ThriftBrain
    from scheduler_py.scheduling.interfaces import OperatorError
    from scheduler_py.scheduling.round import RoundConfig
    from scheduler_py.service import client as client_module
    from scheduler_py.service.auth import OperatorSecret
    from scheduler_py.service.server import BrainHandler
    from tests.brain_server import serve_brain
    from tests.test_service_read_auth import _Controller

    monkeypatch.setattr(client_module, "_reads_need_secret", set())
    secret = "dashboard-test-secret"
    controller = _Controller()
    handler = BrainHandler(
        RoundConfig(), None, controller, OperatorSecret(secret, "the test's secret"),
        reads_need_secret=True,
    )  # fmt: skip
    server, address = serve_brain(handler)
    try:
        brain = ThriftBrain(address, lambda: secret)
        assert brain.status()["trigger"]["controller"] is True
        assert brain.history("wc")[0]["id"] == "r-1"
        assert brain.replan("wc", "", {}, dry_run=True)["dry_run"] is True
        monkeypatch.setattr(client_module, "_reads_need_secret", set())
        with pytest.raises(OperatorError, match="--require-auth-reads"):
            ThriftBrain(address, lambda: None).status()
    finally:
        server.close()


def test_a_browser_logs_in_and_the_pages_read_the_api_with_the_session_cookie(tmp_path):
    """In headless Chromium: a page without the cookie is the login page; after logging in,
    the Cluster page's JavaScript reads the API with the cookie alone, without a console
    error."""
    from tests import dashboard_browser

    if dashboard_browser.missing():
        pytest.skip(str(dashboard_browser.missing()))
    brain = FakeBrain()
    app = create_app(Sources(brain, None, None, TOKEN, Clock()), reads_need_token=True)
    with dashboard_browser.serve(app) as base, dashboard_browser.chromium() as driver:
        visit = dashboard_browser.Visit(driver, base, tmp_path)
        visit.open("login", "/")
        assert visit.js("return document.getElementById('login-token') !== null")
        assert "--require-token" in visit.text("main")
        visit.console()  # the 401 of the page itself, as the browser reports it
        dashboard_browser.log_in(driver, base, TOKEN)
        supervisors = len(brain.document["supervisors"])
        visit.cluster(supervisors=supervisors, topology="wc")
        assert visit.errors["cluster"] == [], visit.errors
