"""Supervisors Nimbus blacklisted (STORM-3507, BlacklistScheduler): the shim reports them beside
the snapshot (scheduler.thrift ClusterSnapshot 7 and 8; SnapshotBuilderTest checks the Java
side), the typed state and the brain's status carry them, and the dashboard's cluster view tells
them from supervisors that are gone."""

from __future__ import annotations

import json

from scheduler_py.dashboard.app import create_app
from scheduler_py.dashboard.sources import Sources
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.snapshot import to_state
from scheduler_py.service.wire import wire
from tests.dashboard_fakes import TOKEN, Clock, FakeBrain
from tests.snapshots import snapshot, supervisor, wordcount

# s3 is blacklisted and still runs executors 3, 6, 9, 11; s4 runs 2 but Storm no longer
# reports it at all
CURRENT = [(t, t, "s1", 6700) for t in (1, 4, 7, 10, 5, 8)] + [
    (3, 3, "s3", 6700),
    (6, 6, "s3", 6700),
    (9, 9, "s3", 6700),
    (11, 11, "s3", 6700),
    (2, 2, "s4", 6700),
]


def _snapshot(reported: bool = True):
    value = snapshot(
        [supervisor("s1", owners={6700: "wc-1"}), supervisor("s2")],
        [wordcount(current=CURRENT, needs_scheduling=False)],
    )
    if reported:
        value.blacklisted_supervisors = [wire().BlacklistedSupervisor(id="s3", host="h3")]
        value.blacklisted_hosts = ["h3", "h9", "h3"]
    return value


def test_the_typed_state_carries_the_blacklist():
    state = to_state(_snapshot())
    assert state.blacklisted == {"s3": "h3"} and state.blacklisted_hosts == ("h3", "h9")
    older = to_state(_snapshot(reported=False))
    assert older.blacklisted is None and older.blacklisted_hosts == ()


def test_a_malformed_blacklist_entry_is_skipped_not_fatal():
    value = _snapshot()
    value.blacklisted_supervisors.append(wire().BlacklistedSupervisor(id="", host="h"))
    value.blacklisted_hosts.append(7)
    state = to_state(value)
    assert state.blacklisted == {"s3": "h3"} and state.blacklisted_hosts == ("h3", "h9")


def _status(reported: bool = True) -> dict:
    handler = BrainHandler(RoundConfig("even"))
    handler.schedule(_snapshot(reported))
    return json.loads(handler.status())


def test_status_lists_the_blacklisted_supervisors_and_hosts():
    status = _status()
    assert status["blacklisted_supervisors"] == [{"id": "s3", "host": "h3"}]
    assert status["blacklisted_hosts"] == ["h3", "h9"]
    assert [s["id"] for s in status["supervisors"]] == ["s1", "s2"]
    older = _status(reported=False)
    assert older["blacklisted_supervisors"] is None and older["blacklisted_hosts"] == []


def _client(status: dict):
    sources = Sources(FakeBrain(status), None, None, TOKEN, Clock())
    return create_app(sources).test_client()


def test_cluster_view_tells_blacklisted_from_missing_supervisors():
    data = _client(_status()).get("/api/v1/cluster").get_json()
    assert data["blacklist_reported"] is True
    assert data["blacklisted_supervisors"] == [
        {"id": "s3", "host": "h3", "placed_topologies": ["wc"]}
    ]
    assert data["blacklisted_hosts"] == ["h3", "h9"]
    assert data["missing_supervisors"] == ["s4"]
    older = _client(_status(reported=False)).get("/api/v1/cluster").get_json()
    assert older["blacklist_reported"] is False and older["blacklisted_supervisors"] == []
    assert older["missing_supervisors"] == ["s3", "s4"]


def test_topology_placement_names_the_blacklisted_host():
    data = _client(_status()).get("/api/v1/topologies/wc").get_json()
    hosts = {h["host"] for h in data["placement"]}
    assert hosts == {"s1", "h3 (blacklisted)", "(missing supervisor s4)"}
