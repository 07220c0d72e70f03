"""The dashboard as ``deploy/cluster-up.sh`` starts it, against the real brain on the real
local cluster (docs/dashboard.md): the cluster and a running topology as the brain placed
them, a what-if dry run, and the token rule for applying."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.cluster.waiting import machine_timeout, wait_until

pytestmark = pytest.mark.cluster


def _get(cluster, path: str, token: str | None = None, body: dict | None = None):
    """(status, JSON body) of a request to the cluster's dashboard."""
    url = f"http://127.0.0.1:{cluster.env['DASHBOARD_PORT']}{path}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def _listed(cluster, name: str):
    status, body = _get(cluster, "/api/v1/topologies")
    if status != 200:
        return None
    found = next((t for t in body["topologies"] if t["name"] == name), None)
    # the round after the placing one sees the assignment
    return found if found and found["executors"] > 0 else None


def test_the_dashboard_shows_and_dry_runs_what_the_brain_placed(cluster):
    if cluster.env.get("DASHBOARD_STARTED") != "yes":
        pytest.skip("cluster-up did not start the dashboard (Flask missing?): see cluster.env")
    cluster.submit("wc-dash", "scheduler.brain.algorithm=td", wait_acked=5)
    try:
        listed = wait_until(
            lambda: _listed(cluster, "wc-dash"),
            machine_timeout(60),
            "the dashboard to list wc-dash with its executors (the brain's status() of a round "
            "after the placing one)",
        )
        assert listed["decision"] == "PLACE" and listed["algorithm"] == "td"
        # the shim calls the brain only once there is a topology: its rounds carry the cluster
        supervisors = int(cluster.env["STORM_SUPERVISORS"])

        def every_supervisor_shown():
            status, body = _get(cluster, "/api/v1/cluster")
            return status == 200 and len(body.get("supervisors", [])) == supervisors

        wait_until(
            every_supervisor_shown,
            machine_timeout(60),
            f"the dashboard's /api/v1/cluster to show {supervisors} supervisors",
            lambda: f"(last answer: {_get(cluster, '/api/v1/cluster')})",
        )
        status, detail = _get(cluster, "/api/v1/topologies/wc-dash")
        assert status == 200, detail
        shown = sum(
            len(worker["executors"]) for host in detail["placement"] for worker in host["workers"]
        )
        assert shown == len(cluster.nimbus.executor_runs("wc-dash"))

        status, whatif = _get(
            cluster, "/api/v1/topologies/wc-dash/whatif", body={"algorithm": "even"}
        )
        assert status == 200, whatif
        assert whatif["dry_run"] is True and whatif["proposal"]

        token_file = cluster.directory / "run" / "dashboard.token"
        assert token_file.stat().st_mode & 0o077 == 0, "the token file must be private (0600)"
        status, refused = _get(
            cluster, "/api/v1/topologies/wc-dash/apply", token="wrong", body={"algorithm": "td"}
        )
        assert status == 401, refused
        status, missing = _get(cluster, "/api/v1/topologies/nope")
        assert status == 404 and "wc-dash" in missing["error"]
    finally:
        cluster.kill("wc-dash")
