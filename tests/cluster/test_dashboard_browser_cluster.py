"""Every dashboard page in headless Chromium (tests/dashboard_browser.py) against the real
brain on the real local cluster, as ``deploy/cluster-up.sh`` starts them: word count placed
by the brain and measured by the worker monitor, a what-if dry run in the page, no console
error on any page, and a screenshot of each page (docs/dashboard.md).

The screenshots in docs/dashboard.md are made by this test:

    DASHBOARD_SCREENSHOTS=docs/dashboard pytest tests/cluster/test_dashboard_browser_cluster.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_py.algorithms import registry
from tests import dashboard_browser
from tests.cluster.test_dashboard_cluster import _get, _listed
from tests.cluster.waiting import machine_timeout, wait_until

REASON = dashboard_browser.missing()
pytestmark = [pytest.mark.cluster, pytest.mark.skipif(REASON is not None, reason=str(REASON))]

NAME = "wc-browser"


def _aggregate(cluster) -> str:
    """``scheduler-py aggregate --once`` over the cluster's ZooKeeper (PySpark); its output."""
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("scheduler-py")),
            "aggregate",
            "--once",
            "--master",
            "local[2]",
            "--zookeeper",
            f"{cluster.env['STORM_ZK_HOST']}:{cluster.env['STORM_ZK_PORT']}",
            "--nimbus",
            cluster.env["STORM_NIMBUS"],
            "--window",
            "60s",
            "--cpu-weight",
            "0",
        ],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"aggregate failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _measured(cluster) -> dict | None:
    """The topology's detail once the dashboard shows measured traffic between executors."""
    status, detail = _get(cluster, f"/api/v1/topologies/{NAME}")
    measured = status == 200 and detail["cost_basis"]["basis"] == "measured" and detail["edges"]
    return detail if measured else None


def test_every_page_in_chromium_against_the_real_cluster(cluster, tmp_path):
    if cluster.env.get("DASHBOARD_STARTED") != "yes":
        pytest.skip("cluster-up did not start the dashboard (Flask missing?): see cluster.env")
    # `even` spreads word count over the supervisors: traffic crosses workers and hosts,
    # and the what-if page has something to gain; no automatic re-plan may move it meanwhile
    topology_id = cluster.submit(
        NAME, "scheduler.brain.algorithm=even", "scheduler.reconfig.enabled=false", wait_acked=20
    )
    try:
        wait_until(
            lambda: _listed(cluster, NAME),
            machine_timeout(60),
            f"the dashboard to list {NAME} with its executors",
        )
        supervisors = int(cluster.env["STORM_SUPERVISORS"])
        wait_until(
            lambda: len(_get(cluster, "/api/v1/cluster")[1].get("supervisors", [])) == supervisors,
            machine_timeout(60),
            f"the dashboard's /api/v1/cluster to show {supervisors} supervisors",
        )
        outputs: list[str] = []
        wait_until(
            lambda: outputs.append(_aggregate(cluster)) or _measured(cluster),
            machine_timeout(300),
            f"an aggregate of {NAME}'s monitor windows with traffic between executors",
            lambda: f"(aggregate said: {outputs[-1] if outputs else 'nothing'})",
        )
        runs = cluster.nimbus.executor_runs(NAME)
        shots = dashboard_browser.screenshot_dir(tmp_path / "screenshots")
        with dashboard_browser.chromium() as driver:
            base = f"http://127.0.0.1:{cluster.env['DASHBOARD_PORT']}"
            visit = dashboard_browser.Visit(driver, base, shots, timeout=machine_timeout(30))

            rows = visit.cluster(supervisors=supervisors, topology=NAME)
            assert any(NAME in row[7] for row in rows), f"no worker of {NAME} shown: {rows}"

            shown = visit.topology(NAME, executors=len(runs))
            graph = shown["graph"]
            assert graph["executors"] == graph["nested"] == len(runs), graph
            assert graph["workers"] == len({(r.host, r.port) for r in runs}), graph
            assert graph["hosts"] == len({r.host for r in runs}), graph
            assert graph["edges"] > 0, graph
            assert "Traffic and CPU measured" in shown["summary"], shown["summary"]

            visit.decisions(expect=topology_id)

            whatif = visit.whatif(NAME, "td")
            dashboard_browser.check_whatif(whatif, running_algorithm="even", algorithm="td")
            assert whatif["answer"]["proposal"]["costs"].startswith("measured"), whatif["answer"]

            visit.algorithms(list(registry.algorithms()))
        assert visit.errors == {page: [] for page in visit.errors}, visit.errors
        assert sorted(p.name for p in shots.glob("*.png")) == [
            "algorithms.png",
            "cluster.png",
            "decisions.png",
            "topology.png",
            "whatif.png",
        ]
    finally:
        cluster.kill(NAME)
