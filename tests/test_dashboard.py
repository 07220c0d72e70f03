"""The dashboard's JSON API and pages (scheduler_py/dashboard/) with Flask's test client and
the fake sources of tests/dashboard_fakes.py."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from scheduler_py.dashboard.app import create_app
from scheduler_py.dashboard.planlog import PlanLogFile
from scheduler_py.dashboard.sources import Sources
from scheduler_py.dashboard.token import TokenError, load_or_create_token
from scheduler_py.reconfig.history import History
from tests.dashboard_fakes import TOKEN, Clock, FakeAggregates, FakeBrain, aggregate

BODY = {"algorithm": "td", "params": {"key": "rs"}}


def make(tmp_path: Path, token: str | None = TOKEN, with_aggregate: bool = True):
    brain = FakeBrain()
    aggregates = FakeAggregates({"wc-1": aggregate()} if with_aggregate else {})
    log = tmp_path / "brain-plans.jsonl"
    clock = Clock()
    sources = Sources(brain, PlanLogFile(log), aggregates, token, clock)
    return create_app(sources).test_client(), brain, aggregates, log, clock


@pytest.fixture
def env(tmp_path):
    return make(tmp_path)


def test_cluster_shows_racks_slots_declared_and_measured_cpu_and_brain_health(env):
    client, *_ = env
    response = client.get("/api/v1/cluster")
    assert response.status_code == 200
    data = response.get_json()
    s1, s2 = data["supervisors"]
    assert (s1["host"], s1["rack"], s2["rack"]) == ("s1", "r1", "r2")
    assert (s1["slots_used"], s1["slots_free"], s2["slots_used"], s2["slots_free"]) == (2, 2, 1, 3)
    assert (s1["cpu_declared_used"], s2["cpu_declared_used"]) == (70.0, 40.0)
    assert (s1["cpu_measured"], s2["cpu_measured"]) == (12.5, 2.0)
    assert data["racks"] == ["r1", "r2"]
    assert data["missing_supervisors"] == []
    brain = data["brain"]
    assert (brain["status"], brain["last_round"], brain["fallbacks_last_round"]) == ("ok", 7, 0)
    assert brain["last_round_age_s"] == pytest.approx(3.0)
    assert brain["round_latency_ms"] > 0


def test_topologies_lists_each_with_decision(env):
    client, *_ = env
    (topology,) = client.get("/api/v1/topologies").get_json()["topologies"]
    assert (topology["id"], topology["name"], topology["executors"]) == ("wc-1", "wc", 11)
    assert topology["workers_used"] == 3 and topology["decision"] in ("KEEP", "PLACE")


@pytest.mark.parametrize("key", ["wc", "wc-1"])
def test_topology_detail_groups_placement_and_flags_edges(env, key):
    client, *_ = env
    data = client.get(f"/api/v1/topologies/{key}").get_json()
    hosts = {
        h["host"]: {w["worker"]: w["executors"] for w in h["workers"]} for h in data["placement"]
    }
    assert set(hosts) == {"s1", "s2"} and set(hosts["s1"]) == {"s1:6700", "s1:6701"}
    spout = next(e for e in hosts["s1"]["s1:6700"] if e["executor"] == "10-10")
    assert (spout["component"], spout["cpu_declared"], spout["cpu_measured"]) == (
        "spout",
        10.0,
        5.0,
    )
    flags = {(e["src"], e["dst"]): (e["inter_worker"], e["inter_host"]) for e in data["edges"]}
    assert flags == {
        ("10-10", "7-7"): (False, False),
        ("7-7", "5-5"): (True, False),
        ("8-8", "6-6"): (True, True),
    }
    matrix = data["matrix"]
    assert matrix["executors"] == ["5-5", "6-6", "7-7", "8-8", "10-10"]
    assert [4, 2, 100.0] in matrix["cells"]
    assert data["cost_basis"] == {"basis": "measured", "aggregate_age_s": 12.0, "windows": 6}
    assert {"from": "spout", "to": "split", "stream": "default"} in data["component_edges"]
    assert all(e["to"] != "__acker" for e in data["component_edges"])


def test_malformed_pairs_of_an_aggregate_are_skipped(tmp_path):
    client, _, aggregates, *_ = make(tmp_path)
    document = aggregate()
    document["pairs"] += [
        {"src": [1], "dst": [4, 4], "tuples_per_s": 1.0},
        {"src": "7-7", "dst": [4, 4]},
        {"dst": [4, 4]},
    ]
    aggregates.documents["wc-1"] = document
    response = client.get("/api/v1/topologies/wc")
    assert response.status_code == 200 and len(response.get_json()["edges"]) == 3


def test_topology_without_aggregate_is_planned_on_declared_costs(tmp_path):
    client, *_ = make(tmp_path, with_aggregate=False)
    data = client.get("/api/v1/topologies/wc").get_json()
    assert data["cost_basis"]["basis"] == "declared" and data["edges"] == []


def test_zookeeper_down_is_reported_and_the_rest_served(env):
    client, _, aggregates, *_ = env
    aggregates.down = True
    cluster = client.get("/api/v1/cluster")
    assert cluster.status_code == 200 and "ZooKeeper" in cluster.get_json()["aggregates_error"]
    detail = client.get("/api/v1/topologies/wc")
    assert detail.status_code == 200 and "ZooKeeper" in detail.get_json()["aggregate_error"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/topologies/nope"),
        ("post", "/api/v1/topologies/nope/whatif"),
        ("post", "/api/v1/topologies/nope/apply"),
    ],
)
def test_unknown_topology_is_404_with_a_message(env, method, path):
    client, *_ = env
    headers = {"Authorization": f"Bearer {TOKEN}"}
    response = getattr(client, method)(path, json=BODY, headers=headers)
    assert response.status_code == 404
    message = response.get_json()["error"]
    assert "'nope'" in message and "running: wc" in message


def test_decisions_merge_plan_log_and_history_newest_first(env):
    client, brain, _, log, _ = env
    log.write_text(
        json.dumps({"topology_id": "wc-1", "decision": "PLACE", "algorithm": "td",
                    "reason": "planned", "timestamp_ms": 1000, "round": 1, "round_seconds": 0.01})
        + "\n{torn line\n"
        + json.dumps({"topology_id": "other-2", "decision": "LEAVE_TO_STORM",
                      "timestamp_ms": 3000}) + "\n"
    )  # fmt: skip
    brain.histories["wc"] = [
        {"id": "r-1", "topology": "wc", "at": 2.0, "state": "completed", "trigger": "operator",
         "pause_secs": 1.5, "report": {"workers_restarted": 2, "predicted_gain": 40.0},
         "measured": {"gain": 35.0}}
    ]  # fmt: skip
    items = client.get("/api/v1/decisions").get_json()["items"]
    assert [(i["kind"], i["time_ms"]) for i in items] == [
        ("plan", 3000),
        ("reconfiguration", 2000),
        ("plan", 1000),
    ]
    reconfiguration = items[1]
    assert (reconfiguration["workers_restarted"], reconfiguration["predicted_gain"]) == (2, 40.0)
    assert reconfiguration["measured_gain"] == {"gain": 35.0}
    assert items[2]["round_ms"] == 10.0
    only = client.get("/api/v1/decisions?topology=wc&limit=5").get_json()["items"]
    assert [i["kind"] for i in only] == ["reconfiguration", "plan"]


def test_a_reconfiguration_is_placed_on_the_timeline_by_its_start(env):
    """The brain's ``history`` answers History.entries: events merged, timed by ``started``
    and ``updated`` (scheduler_py/reconfig/history.py), not by an event's ``at``."""
    client, brain, _, log, _ = env
    log.write_text(json.dumps({"topology_id": "wc-1", "decision": "PLACE", "timestamp_ms": 1000}))
    journal = History()
    journal.record("wc", "r-9", state="draining", trigger="operator")
    journal.record("wc", "r-9", state="rolled_back", reason="timed out")
    (entry,) = journal.entries("wc")
    brain.histories["wc"] = [entry]
    items = client.get("/api/v1/decisions?topology=wc").get_json()["items"]
    assert [i["kind"] for i in items] == ["reconfiguration", "plan"]
    assert items[0]["time_ms"] == int(entry["started"] * 1000)
    assert items[0]["entry"]["states"] == ["draining", "rolled_back"]


def test_decisions_without_a_plan_log_say_so(tmp_path):
    sources = Sources(FakeBrain(), None, None, None, Clock())
    data = create_app(sources).test_client().get("/api/v1/decisions").get_json()
    assert "--plan-log" in data["plan_log_error"] and data["items"] == []


@pytest.mark.parametrize("value", ["0", "x", "10001", "-3", "1.5"])
def test_bad_limit_is_400_naming_the_field(env, value):
    client, *_ = env
    response = client.get(f"/api/v1/decisions?limit={value}")
    assert response.status_code == 400
    data = response.get_json()
    assert data["field"] == "limit" and "integer from 1 to 10000" in data["expected"]
    assert value in data["found"]


def test_decisions_of_an_unknown_topology_is_404(env):
    client, *_ = env
    assert client.get("/api/v1/decisions?topology=nope").status_code == 404


def test_algorithms_lists_the_registry_with_parameters_and_papers(env):
    client, *_ = env
    algorithms = {a["name"]: a for a in client.get("/api/v1/algorithms").get_json()["algorithms"]}
    from scheduler_py.algorithms.registry import algorithms as registered

    assert set(algorithms) == set(registered())
    td = algorithms["td"]
    assert td["paper"] == registered()["td"].paper
    assert {"name": "key", "default": "rs"}.items() <= next(
        p for p in td["params"] if p["name"] == "key"
    ).items()


def test_whatif_asks_the_brain_for_a_dry_run_with_coerced_params(env):
    client, brain, *_ = env
    response = client.post("/api/v1/topologies/wc-1/whatif", json=BODY)
    assert response.status_code == 200
    data = response.get_json()
    assert brain.calls == [("wc", "td", {"key": "rs"}, True)]
    assert data["dry_run"] is True and data["running"]["name"] == "wc"
    assert data["proposal"]["algorithm"] == "td"
    empty = client.post("/api/v1/topologies/wc/whatif")
    assert empty.status_code == 200 and brain.calls[-1] == ("wc", "", {}, True)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("[1, 2]", "body"),
        ("{not json", "body"),
        (json.dumps({"algorithm": "no-such"}), "algorithm"),
        (json.dumps({"algorithm": 3}), "algorithm"),
        (json.dumps({"algorithm": "td", "params": [1]}), "params"),
        (json.dumps({"algorithm": "td", "params": {"nope": 1}}), "params.nope"),
        (json.dumps({"algorithm": "td", "params": {"key": {"a": 1}}}), "params.key"),
        (json.dumps({"params": {"key": "rs"}}), "algorithm"),
        (json.dumps({"algorithm": "td", "colour": "red"}), "colour"),
    ],
)
def test_malformed_plan_requests_are_400_naming_the_field(env, body, field):
    client, brain, *_ = env
    response = client.post(
        "/api/v1/topologies/wc/whatif", data=body, content_type="application/json"
    )
    assert response.status_code == 400
    data = response.get_json()
    assert data["field"] == field and data["expected"] and field in data["error"]
    assert brain.calls == []


def test_a_numeric_parameter_is_checked_against_its_default(env):
    client, *_ = env
    from scheduler_py.algorithms.registry import algorithms as registered

    name, param = next(
        (info.name, key)
        for info in registered().values()
        for key, (default, _) in info.params.items()
        if isinstance(default, int | float) and not isinstance(default, bool)
    )
    body = {"algorithm": name, "params": {param: "many"}}
    response = client.post("/api/v1/topologies/wc/whatif", json=body)
    assert response.status_code == 400 and response.get_json()["field"] == f"params.{param}"


def test_apply_is_403_when_no_token_is_configured(tmp_path):
    client, brain, *_ = make(tmp_path, token=None)
    response = client.post(
        "/api/v1/topologies/wc/apply", json=BODY, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code == 403 and "read-only" in response.get_json()["error"]
    assert brain.calls == []
    assert client.post("/api/v1/topologies/wc/whatif", json=BODY).status_code == 200
    assert brain.calls == [("wc", "td", {"key": "rs"}, True)]


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}, {"Cookie": f"t={TOKEN}"}],
)
def test_apply_with_a_missing_or_wrong_bearer_is_401(env, headers):
    client, brain, *_ = env
    response = client.post("/api/v1/topologies/wc/apply", json=BODY, headers=headers)
    assert response.status_code == 401 and "Bearer" in response.get_json()["error"]
    assert brain.calls == []


def test_apply_with_the_token_goes_through_the_brain_without_dry_run(env):
    client, brain, *_ = env
    response = client.post(
        "/api/v1/topologies/wc/apply", json=BODY, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code == 200
    assert brain.calls == [("wc", "td", {"key": "rs"}, False)]
    assert response.get_json()["proposal"]["reconfiguration_id"] == "r-1"


def test_a_refusal_of_the_brain_is_409_with_its_reason(env):
    client, brain, *_ = env
    brain.refuse = "this brain runs without the reconfiguration controller"
    response = client.post("/api/v1/topologies/wc/whatif", json=BODY)
    assert (
        response.status_code == 409
        and "without the reconfiguration" in response.get_json()["error"]
    )


def test_brain_down_from_the_start_is_503_with_a_message_and_never_500(tmp_path):
    client, brain, *_ = make(tmp_path)
    brain.down = True
    for path in ["/api/v1/cluster", "/api/v1/topologies", "/api/v1/topologies/wc"]:
        response = client.get(path)
        assert response.status_code == 503, path
        assert "fake-brain:9627" in response.get_json()["error"]
    assert client.get("/api/v1/decisions").status_code == 200
    assert client.get("/api/v1/algorithms").status_code == 200
    assert client.post("/api/v1/topologies/wc/whatif", json=BODY).status_code == 503
    for page in ["/", "/topology/wc", "/decisions", "/whatif", "/algorithms"]:
        assert client.get(page).status_code == 200


def test_brain_lost_later_keeps_serving_the_last_status_marked_stale(env):
    client, brain, _, _, clock = env
    assert client.get("/api/v1/cluster").get_json()["brain"]["status"] == "ok"
    brain.down = True
    clock.now += 5
    data = client.get("/api/v1/cluster").get_json()
    assert data["brain"]["status"] == "stale" and "fake-brain" in data["brain"]["error"]
    assert len(data["supervisors"]) == 2
    assert client.get("/api/v1/topologies/wc").get_json()["brain"] == "stale"
    decisions = client.get("/api/v1/decisions").get_json()
    assert "fake-brain" in decisions["history_error"]


def test_unknown_api_path_and_wrong_method_answer_json(env):
    client, *_ = env
    missing = client.get("/api/v1/nothing")
    assert missing.status_code == 404 and "error" in missing.get_json()
    wrong = client.get("/api/v1/topologies/wc/apply")
    assert wrong.status_code == 405 and "error" in wrong.get_json()


def test_token_file_is_created_0600_then_reused(tmp_path):
    path = tmp_path / "dashboard.token"
    first = load_or_create_token(path)
    assert len(first) >= 40 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_token(path) == first


def test_token_file_open_to_others_or_empty_is_refused(tmp_path):
    path = tmp_path / "dashboard.token"
    path.write_text("secret\n")
    os.chmod(path, 0o644)
    with pytest.raises(TokenError, match="chmod 600"):
        load_or_create_token(path)
    os.chmod(path, 0o600)
    path.write_text("\n")
    with pytest.raises(TokenError, match="empty"):
        load_or_create_token(path)


@pytest.mark.parametrize("page", ["/", "/topology/wc", "/decisions", "/whatif", "/algorithms"])
def test_pages_render_and_load_only_packaged_assets(env, page):
    client, *_ = env
    response = client.get(page)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'data-poll-ms="5000"' in html
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert not [s for s in sources if s.startswith(("http:", "https:", "//"))]
    for asset in (s for s in sources if s.startswith("/static/")):
        assert client.get(asset).status_code == 200, asset


def test_vendored_libraries_ship_with_their_licences():
    vendor = Path(__file__).parent.parent / "scheduler_py" / "dashboard" / "static" / "vendor"
    for library, script in [
        ("chartjs", "chart.umd.min.js"),
        ("chartjs-chart-matrix", "chartjs-chart-matrix.min.js"),
        ("cytoscape", "cytoscape.min.js"),
    ]:
        assert "license" in (vendor / library / script).read_text()[:400].lower()
        assert any(p.name.startswith("LICENSE") for p in (vendor / library).iterdir())


def test_package_data_ships_every_template_and_asset():
    import tomllib

    root = Path(__file__).parent.parent
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["scheduler_py"]
    package = root / "scheduler_py"
    files = [
        p.relative_to(package).as_posix()
        for folder in ("dashboard/templates", "dashboard/static")
        for p in (package / folder).rglob("*")
        if p.is_file()
    ]
    assert len(files) > 10
    shipped = {p.relative_to(package).as_posix() for g in globs for p in package.glob(g)}
    assert sorted(set(files) - shipped) == []


def test_dashboard_command_binds_localhost_by_default(monkeypatch):
    from scheduler_py.cli import build_parser
    from scheduler_py.cli.cluster_options import resolve

    # the brain's address is resolved at run time: --brain, $SCHEDULER_PY_BRAIN, storm.yaml
    for name in ("SCHEDULER_PY_BRAIN", "SCHEDULER_BRAIN", "STORM_CONF_DIR", "STORM_HOME"):
        monkeypatch.delenv(name, raising=False)
    args = build_parser().parse_args(["dashboard"])
    assert (args.host, args.port, resolve(args).brain, args.token_file) == (
        "127.0.0.1",
        8627,
        "127.0.0.1:9627",
        None,
    )
