"""The brain service over real Thrift: a thriftpy2 server on an ephemeral port."""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import time
from collections import Counter

import pytest
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TFramedTransportFactory

from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.wire import wire
from tests.brain_server import port_of, serve_brain
from tests.snapshots import answer, snapshot, supervisor, wordcount

SUPERVISORS = [
    supervisor("sup-a", (6700, 6701)),
    supervisor("sup-b", (6710, 6711)),
    supervisor("sup-c", (6720, 6721)),
]


def _placements(plan):
    return {
        (p.executor.task_start, p.executor.task_end): (p.supervisor_id, p.port)
        for p in plan.placements
    }


def test_round_places_every_executor_exactly_once():
    reply, records = answer(snapshot(SUPERVISORS, [wordcount()]), RoundConfig("even"))
    (plan,) = reply.plans
    assert plan.decision == wire().Decision.PLACE
    keys = [(p.executor.task_start, p.executor.task_end) for p in plan.placements]
    assert sorted(keys) == [(t, t) for t in range(1, 12)]
    assert len(set(keys)) == len(keys)
    for p in plan.placements:
        sup = next(s for s in SUPERVISORS if s.id == p.supervisor_id)
        assert p.port in [slot.port for slot in sup.slots]
    assert records[0].decision == "PLACE" and "even" in plan.reason


def test_even_matches_storm_round_robin():
    """EvenScheduler: executors by start task, round-robin over 3 interleaved slots."""
    reply, _ = answer(snapshot(SUPERVISORS, [wordcount()]), RoundConfig("even"))
    placed = _placements(reply.plans[0])
    slots = [("sup-a", 6700), ("sup-b", 6710), ("sup-c", 6720)]
    assert placed == {(t, t): slots[(t - 1) % 3] for t in range(1, 12)}


def test_topology_conf_selects_algorithm_and_unknown_is_left_to_storm():
    topo = wordcount(conf={"scheduler.brain.algorithm": "no-such-algorithm"})
    reply, _ = answer(snapshot(SUPERVISORS, [topo]), RoundConfig("even"))
    (plan,) = reply.plans
    assert plan.decision == wire().Decision.LEAVE_TO_STORM
    assert "unknown algorithm 'no-such-algorithm'" in plan.reason
    assert "even" in plan.reason  # lists what is available


def test_bad_params_are_left_to_storm_with_reason():
    topo = wordcount(conf={"scheduler.brain.algorithm": "even", "scheduler.brain.params": [1]})
    reply, _ = answer(snapshot(SUPERVISORS, [topo]), RoundConfig("even"))
    assert reply.plans[0].decision == wire().Decision.LEAVE_TO_STORM
    assert "must be a JSON object" in reply.plans[0].reason


def test_infeasible_topology_names_component_and_resource():
    tiny = [supervisor("sup-a", (6700,), cpu=5.0)]
    reply, _ = answer(snapshot(tiny, [wordcount()]), RoundConfig("even"))
    plan = reply.plans[0]
    assert plan.decision == wire().Decision.LEAVE_TO_STORM
    assert "needs 10.0% CPU per executor" in plan.reason
    assert "sup-a has 5.0% CPU" in plan.reason


def test_complete_topology_is_kept():
    current = [(t, t, "sup-a", 6700) for t in range(1, 12)]
    owners = {6700: "wc-1"}
    sups = [supervisor("sup-a", (6700, 6701), owners=owners, used_cpu=110.0)]
    reply, _ = answer(
        snapshot(sups, [wordcount(current=current, needs_scheduling=True)]), RoundConfig("even")
    )
    assert reply.plans[0].decision == wire().Decision.KEEP


def test_slots_of_other_topologies_are_not_used_and_capacity_is_shared():
    owners = {6700: "other", 6710: "other"}
    sups = [
        supervisor("sup-a", (6700, 6701), owners={6700: "other"}, used_cpu=390.0),
        supervisor("sup-b", (6710, 6711), owners={6710: "other"}),
    ]
    assert owners  # documentation of the layout above
    reply, _ = answer(snapshot(sups, [wordcount()]), RoundConfig("even"))
    plan = reply.plans[0]
    # sup-a has only 10% CPU left: even (capacity-blind) would overload it -> left to Storm
    assert plan.decision == wire().Decision.LEAVE_TO_STORM
    assert "sup-a" in plan.reason

    sups[0] = supervisor("sup-a", (6700, 6701), owners={6700: "other"}, used_cpu=100.0)
    reply, _ = answer(snapshot(sups, [wordcount()]), RoundConfig("even"))
    ports = Counter(p.port for p in reply.plans[0].placements)
    assert set(ports) == {6701, 6711}


def test_two_new_topologies_in_one_round_do_not_share_slots():
    sups = [supervisor("sup-a", (6700, 6701)), supervisor("sup-b", (6710, 6711))]
    topos = [wordcount("wc-1", workers=2), wordcount("wc-2", workers=2)]
    reply, _ = answer(snapshot(sups, topos), RoundConfig("even"))
    slots = [set(_placements(p).values()) for p in reply.plans]
    assert all(p.decision == wire().Decision.PLACE for p in reply.plans)
    assert not slots[0] & slots[1]


@pytest.fixture()
def brain():
    server, address = serve_brain(BrainHandler(RoundConfig("even")))
    yield port_of(address)
    server.close()


def _client(port):
    return make_client(
        wire().SchedulerBrain,
        "127.0.0.1",
        port,
        timeout=5000,
        trans_factory=TFramedTransportFactory(),
        proto_factory=TBinaryProtocolFactory(),
    )


def test_thrift_round_trip(brain):
    client = _client(brain)
    assert client.ping()
    reply = client.schedule(snapshot(SUPERVISORS, [wordcount()]))
    assert reply.plans[0].decision == wire().Decision.PLACE
    client.close()


def test_garbage_on_the_port_does_not_kill_the_service(brain):
    for payload in (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x00\x00\x00\x05hello", b"\xff" * 64):
        with socket.create_connection(("127.0.0.1", brain), timeout=5) as sock:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            with contextlib.suppress(OSError):
                sock.recv(1024)
    client = _client(brain)
    assert client.schedule(snapshot(SUPERVISORS, [wordcount()])).plans
    client.close()


def test_garbage_gets_one_warning_line_per_connection_and_no_traceback(brain, caplog):
    caplog.set_level(logging.WARNING, logger="scheduler_py.service.server")
    for payload in (b"\x00\x00\x00\x05hello", b"\x00\x00\x00\x0c" + b"\x80\x01" + b"\xff" * 10):
        with socket.create_connection(("127.0.0.1", brain), timeout=5) as sock:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            with contextlib.suppress(OSError):
                sock.recv(1024)
    client = _client(brain)  # still answering, and the answer arrives after the warnings
    assert client.schedule(snapshot(SUPERVISORS, [wordcount()])).plans
    client.close()
    records = [r for r in caplog.records if r.name == "scheduler_py.service.server"]
    assert len(records) == 2, [r.getMessage() for r in records]
    for record in records:
        assert record.levelno == logging.WARNING and record.exc_info is None
        assert "not a SchedulerBrain call" in record.getMessage()


class _SlowCosts:
    """Declared costs after a pause (as a slow ZooKeeper would give): the round outlasts a
    short shim timeout."""

    def __init__(self, pause_s: float) -> None:
        self.pause_s = pause_s

    def costs_for(self, topology, storm_executor, conf):
        time.sleep(self.pause_s)
        return topology, "declared (a slow test source)"

    def aggregate(self, topology_id):
        return None

    def close(self) -> None:
        pass


class _ObservingController:
    def __init__(self) -> None:
        self.rounds: list[int] = []

    def armed(self):
        return {}

    def observe_round(self, state, decisions) -> None:
        self.rounds.append(state.round)


def test_a_round_later_than_the_shims_timeout_records_none_of_its_decisions(tmp_path, caplog):
    """The shim gave up on it and fell back: neither the plan log, the status nor the
    controller may say the brain placed anything in that round."""
    plan_log = tmp_path / "plans.jsonl"
    controller = _ObservingController()
    handler = BrainHandler(RoundConfig("even", costs=_SlowCosts(0.05)), plan_log, controller)  # type: ignore[arg-type]
    late = snapshot(SUPERVISORS, [wordcount()], round_=1)
    late.timeout_ms = 10
    with caplog.at_level(logging.WARNING, logger="scheduler_py.service.server"):
        reply = handler.schedule(late)
    assert reply.plans[0].decision == wire().Decision.PLACE  # the reply still goes out
    assert "round 1 took" in caplog.text and "longer than the shim waits" in caplog.text
    assert handler.flush_plan_log(), "the plan log writer did not finish within 10 s"
    assert not plan_log.exists()
    assert json.loads(handler.status())["rounds_seen"] == 0
    assert controller.rounds == []
    in_time = snapshot(SUPERVISORS, [wordcount()], round_=2)
    in_time.timeout_ms = 10_000
    handler.schedule(in_time)
    assert handler.flush_plan_log(), "the plan log writer did not write round 2 within 10 s"
    assert [json.loads(line)["round"] for line in plan_log.read_text().splitlines()] == [2]
    assert json.loads(handler.status())["rounds_seen"] == 1
    assert controller.rounds == [2]
