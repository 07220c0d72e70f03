"""Fake data sources for the dashboard tests (the ports of
scheduler_py/scheduling/dashboard_ports.py) and a status built by the real brain handler."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from scheduler_py.scheduling.dashboard_ports import SourceUnavailable
from scheduler_py.scheduling.interfaces import OperatorError
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler
from tests.snapshots import snapshot, supervisor, wordcount

TOKEN = "right-token"
NOW = 1_000_000.0
# acker 1-3, count 4-6, split 7-9, spout 10-11 (tests/snapshots.py)
CURRENT = [
    (1, 1, "s1", 6700),
    (4, 4, "s1", 6700),
    (7, 7, "s1", 6700),
    (10, 10, "s1", 6700),
    (2, 2, "s1", 6701),
    (5, 5, "s1", 6701),
    (8, 8, "s1", 6701),
    (3, 3, "s2", 6700),
    (6, 6, "s2", 6700),
    (9, 9, "s2", 6700),
    (11, 11, "s2", 6700),
]


def brain_status() -> dict[str, Any]:
    """The status the real brain gives after one round of the wordcount topology."""
    owners1 = {6700: "wc-1", 6701: "wc-1"}
    sups = [
        supervisor("s1", owners=owners1, used_cpu=70.0, rack="r1"),
        supervisor("s2", owners={6700: "wc-1"}, used_cpu=40.0, rack="r2"),
    ]
    topology = wordcount(current=CURRENT, needs_scheduling=False)
    state = snapshot(sups, [topology], round_=7)
    state.timestamp_ms = int((NOW - 3) * 1000)
    handler = BrainHandler(RoundConfig("even"))
    handler.schedule(state)
    return json.loads(handler.status())


def aggregate() -> dict[str, Any]:
    return {
        "v": 1,
        "topology_id": "wc-1",
        "computed_at_ms": int((NOW - 12) * 1000),
        "windows": 6,
        "executors": [
            {"task_start": 10, "task_end": 10, "component": "spout", "cpu_percent": 5.0,
             "supervisor_id": "s1"},
            {"task_start": 7, "task_end": 7, "component": "split", "cpu_percent": 7.5,
             "supervisor_id": "s1"},
            {"task_start": 6, "task_end": 6, "component": "count", "cpu_percent": 2.0,
             "supervisor_id": "s2"},
        ],
        "pairs": [
            {"src": [10, 10], "dst": [7, 7], "tuples_per_s": 100.0, "bytes_per_s": 800.0},
            {"src": [7, 7], "dst": [5, 5], "tuples_per_s": 50.0, "bytes_per_s": 400.0},
            {"src": [8, 8], "dst": [6, 6], "tuples_per_s": 30.0, "bytes_per_s": 240.0},
        ],
    }  # fmt: skip


class FakeBrain:
    address = "fake-brain:9627"

    def __init__(self, status: Mapping[str, Any] | None = None) -> None:
        self.document = status if status is not None else brain_status()
        self.down = False
        self.refuse: str | None = None
        self.calls: list[tuple[str, str, dict[str, Any], bool]] = []
        self.histories: dict[str, list[dict[str, Any]]] = {}
        self.trigger_calls: list[tuple[bool, str | None]] = []

    def _check(self) -> None:
        if self.down:
            raise SourceUnavailable(f"cannot connect to the brain at {self.address}")

    def status(self) -> Mapping[str, Any]:
        self._check()
        return self.document

    def replan(
        self, topology: str, algorithm: str, params: Mapping[str, Any], dry_run: bool
    ) -> Mapping[str, Any]:
        self._check()
        if self.refuse:
            raise OperatorError(self.refuse)
        self.calls.append((topology, algorithm, dict(params), dry_run))
        report: dict[str, Any] = {"topology": topology, "algorithm": algorithm, "dry_run": dry_run}
        if not dry_run:
            report["reconfiguration_id"] = "r-1"
        return report

    def history(self, topology: str) -> Sequence[Mapping[str, Any]]:
        self._check()
        return self.histories.get(topology, [])

    def set_trigger_paused(self, paused: bool, topology: str | None) -> Mapping[str, Any]:
        self._check()
        if self.refuse:
            raise OperatorError(self.refuse)
        self.trigger_calls.append((paused, topology))
        one = {topology: {"since": 1.0}} if paused and topology else {}
        cluster = paused and topology is None
        return {"controller": True, "enabled": True, "paused": cluster, "paused_topologies": one}


class FakeAggregates:
    def __init__(self, documents: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.documents = dict(documents or {})
        self.down = False

    def aggregate(self, topology_id: str) -> Mapping[str, Any] | None:
        if self.down:
            raise SourceUnavailable("ZooKeeper at fake-zk:2181 is unreachable")
        return self.documents.get(topology_id)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now
