"""The dashboard's OpenAPI document (scheduler_py/dashboard/openapi.py): valid, in step with
the Flask routes, and property-based tests that no request built from it, nor random query
and body values, gets a 5xx other than 503 (the brain down)."""

from __future__ import annotations

import json
import re

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate

from scheduler_py.dashboard.app import create_app
from scheduler_py.dashboard.planlog import PlanLogFile
from scheduler_py.dashboard.sources import Sources
from tests.dashboard_fakes import TOKEN, Clock, FakeAggregates, FakeBrain, aggregate


def _app(tmp_path, brain_down: bool = False):
    brain = FakeBrain()
    brain.down = brain_down
    log = tmp_path / "plans.jsonl"
    log.write_text(json.dumps({"topology_id": "wc-1", "timestamp_ms": 5}) + "\n")
    sources = Sources(
        brain, PlanLogFile(log), FakeAggregates({"wc-1": aggregate()}), TOKEN, Clock()
    )
    return create_app(sources)


def test_document_is_valid_openapi_3(tmp_path):
    document = _app(tmp_path).test_client().get("/api/v1/openapi.json").get_json()
    validate(document)


def test_every_api_route_is_documented_and_every_documented_path_routed(tmp_path):
    app = _app(tmp_path)
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    documented = {
        (path, method.upper()) for path, item in document["paths"].items() for method in item
    }
    routed = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/"):
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule.removeprefix("/api/v1"))
        routed |= {(path, m) for m in rule.methods - {"HEAD", "OPTIONS"}}
    assert routed == documented


def test_schemathesis_finds_no_server_error(tmp_path):
    app = _app(tmp_path)
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    failures = []

    def checker(op):
        @settings(
            max_examples=25,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
        )
        @given(case=op.as_strategy())
        def check(case):
            response = case.call()
            if response.status_code >= 500 and response.status_code != 503:
                failures.append((op.label, case.path_parameters, response.status_code))

        return check

    operations = [operation.ok() for operation in schema.get_all_operations()]
    # schemathesis leaves out the document's own path (/openapi.json)
    assert len(operations) == len(app.test_client().get("/api/v1/openapi.json").json["paths"]) - 1
    for op in operations:
        checker(op)()
    assert failures == []


_TEXT = st.text(max_size=30)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    brain_down=st.booleans(),
    topology=st.sampled_from(["wc", "wc-1", "nope"]) | _TEXT.filter(lambda t: "/" not in t),
    limit=_TEXT,
    algorithm=st.sampled_from(["td", "even", "auto", ""]) | _JSON,
    params=_JSON | st.dictionaries(st.sampled_from(["key", "alpha", "k", "x"]), _JSON),
    raw=st.none() | st.binary(max_size=40),
    authorisation=st.sampled_from(["", f"Bearer {TOKEN}", "Bearer x"]),
)
def test_random_parameters_never_give_a_server_error(
    tmp_path_factory, brain_down, topology, limit, algorithm, params, raw, authorisation
):
    client = _app(tmp_path_factory.mktemp("d"), brain_down).test_client()
    quoted = topology.replace("%", "%25").replace("?", "%3F").replace("#", "%23") or "x"
    codes = [
        client.get("/api/v1/decisions", query_string={"limit": limit, "topology": topology}),
        client.get(f"/api/v1/topologies/{quoted}"),
    ]
    body = {"algorithm": algorithm, "params": params}
    for action in ("whatif", "apply"):
        headers = {"Authorization": authorisation} if authorisation else {}
        if raw is None:
            response = client.post(
                f"/api/v1/topologies/{quoted}/{action}", json=body, headers=headers
            )
        else:
            response = client.post(
                f"/api/v1/topologies/{quoted}/{action}", data=raw, headers=headers,
                content_type="application/json",
            )  # fmt: skip
        codes.append(response)
    for response in codes:
        assert response.status_code < 500 or response.status_code == 503, response.get_data()
        assert response.is_json


_AGGREGATE = st.fixed_dictionaries(
    {},
    optional={
        "computed_at_ms": _JSON,
        "windows": _JSON,
        "executors": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "task_start": _JSON | st.integers(1, 11),
                    "task_end": _JSON | st.integers(1, 11),
                    "cpu_percent": _JSON,
                    "supervisor_id": st.sampled_from(["s1", "s2"]) | _JSON,
                },
            )
            | _JSON,
            max_size=4,
        )
        | _JSON,
        "pairs": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "src": st.lists(st.integers(1, 11), min_size=2, max_size=2) | _JSON,
                    "dst": st.lists(st.integers(1, 11), min_size=2, max_size=2) | _JSON,
                    "tuples_per_s": _JSON,
                },
            )
            | _JSON,
            max_size=4,
        )
        | _JSON,
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(document=_AGGREGATE)
def test_odd_aggregates_never_give_a_server_error(tmp_path_factory, document):
    """Aggregates come from ZooKeeper: whatever shape one has, the pages' API answers."""
    brain = FakeBrain()
    sources = Sources(brain, None, FakeAggregates({"wc-1": document}), TOKEN, Clock())
    client = create_app(sources).test_client()
    for path in ("/api/v1/cluster", "/api/v1/topologies/wc"):
        response = client.get(path)
        assert response.status_code == 200, (path, response.get_data())
