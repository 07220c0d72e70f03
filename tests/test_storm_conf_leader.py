"""Leader discovery over ``nimbus.seeds`` (``scheduler_py/nimbus/leader.py``) and the Nimbus
client that uses it (``scheduler_py/nimbus/client.py``).

The rule is tested pure; the client against Nimbus servers played by thriftpy2 on loopback
speaking our subset of Storm's IDL (``scheduler_py/nimbus/nimbus.thrift``: ``getLeader`` and
``getClusterInfo`` with Storm's field ids), since no unit test may start a Storm cluster."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_server
from thriftpy2.transport import TFramedTransportFactory

from scheduler_py.nimbus import NimbusCtl, NimbusLeaderNotFound, parse_addresses
from scheduler_py.nimbus.client import nimbus_idl
from scheduler_py.nimbus.leader import LeaderAnswer, find_leader, seed_order

A, B, C = ("nimbus-a", 6627), ("nimbus-b", 6627), ("nimbus-c", 6627)


def test_the_first_seed_that_names_a_leader_decides():
    asked = []

    def ask(seed):
        asked.append(seed)
        return LeaderAnswer(C)

    assert find_leader([A, B], ask) == (C, [])
    assert asked == [A]


def test_unreachable_seeds_and_seeds_without_a_leader_are_passed_over():
    def ask(seed):
        if seed == A:
            raise ConnectionRefusedError("refused")
        if seed == B:
            return LeaderAnswer(None)
        return LeaderAnswer(C)

    leader, notes = find_leader([A, B, C], ask)
    assert leader == C
    assert notes == [
        "nimbus-a:6627: ConnectionRefusedError: refused",
        "nimbus-b:6627: knows no leader",
    ]


def test_no_leader_anywhere_names_every_seed_and_what_to_check():
    def ask(seed):
        raise TimeoutError("timed out")

    with pytest.raises(NimbusLeaderNotFound) as error:
        find_leader([A, B], ask)
    message = str(error.value)
    assert "nimbus-a:6627" in message and "nimbus-b:6627" in message
    assert "nimbus.seeds" in message and "--nimbus" in message
    assert isinstance(error.value, OSError)  # the CLI's unreachable-service status
    with pytest.raises(NimbusLeaderNotFound, match="no Nimbus seeds"):
        find_leader([], ask)


def test_the_last_leader_is_asked_first():
    assert seed_order([A, B, C], B) == [B, A, C]
    assert seed_order([A, B], ("elsewhere", 1)) == [("elsewhere", 1), A, B]
    assert seed_order([A, B], None) == [A, B]


def test_addresses_parse_with_a_default_port():
    assert parse_addresses("a:1, b ,c:3", 6627) == (("a", 1), ("b", 6627), ("c", 3))
    for bad in ("", ",", "a:x", ":5", "a:0"):
        with pytest.raises(ValueError, match="HOST"):
            parse_addresses(bad, 6627)


# -- the client over Thrift ------------------------------------------------------------------
class NimbusDaemon:
    """One Nimbus of an HA group: knows who leads, and answers getClusterInfo with its name."""

    def __init__(self, name: str, group: dict[str, object]):
        self.name = name
        self.group = group
        self.calls: list[str] = []

    def getLeader(self):
        self.calls.append("getLeader")
        leader = self.group.get("leader")
        if leader is None:
            return None
        host, port = leader
        return nimbus_idl().NimbusSummary(host=host, port=port, isLeader=True)

    def getClusterInfo(self):
        self.calls.append("getClusterInfo")
        idl = nimbus_idl()
        return idl.ClusterSummary(
            supervisors=[],
            topologies=[],
            nimbuses=[idl.NimbusSummary(host=self.name, port=0, isLeader=True)],
        )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture()
def ha_group():
    """Two live Nimbus daemons on loopback and one dead seed; the group dict says who leads."""
    group: dict[str, object] = {}
    servers, daemons = [], {}
    for name in ("first", "second"):
        port = _free_port()
        daemon = NimbusDaemon(name, group)
        server = make_server(
            nimbus_idl().Nimbus,
            daemon,
            "127.0.0.1",
            port,
            proto_factory=TBinaryProtocolFactory(),
            trans_factory=TFramedTransportFactory(),
        )
        threading.Thread(target=server.serve, daemon=True).start()
        servers.append(server)
        daemons[name] = (daemon, ("127.0.0.1", port))
    for _, address in daemons.values():
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(address, timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"fake Nimbus {address} did not listen"
                time.sleep(0.05)
    dead = ("127.0.0.1", _free_port())
    yield group, daemons, dead
    for server in servers:
        server.close()


def test_calls_go_to_the_leader_past_a_dead_seed_and_follow_a_failover(ha_group):
    group, daemons, dead = ha_group
    (first, first_at), (second, second_at) = daemons["first"], daemons["second"]
    group["leader"] = second_at
    ctl = NimbusCtl.of([dead, first_at, second_at], timeout_ms=2000)
    assert ctl.cluster_summary()["nimbuses"][0]["host"] == "second"
    assert first.calls == ["getLeader"]  # asked, named the leader, and was not used
    assert ctl.address() == second_at
    first.calls.clear()
    second.calls.clear()
    ctl.cluster_summary()  # the known leader is asked first: no dead-seed timeout again
    assert first.calls == [] and second.calls == ["getLeader", "getClusterInfo"]
    group["leader"] = first_at  # failover
    assert ctl.cluster_summary()["nimbuses"][0]["host"] == "first"


def test_no_leader_among_live_seeds_is_an_unreachable_nimbus(ha_group):
    _, daemons, dead = ha_group
    alive = daemons["first"][1]
    ctl = NimbusCtl.of([dead, alive], timeout_ms=2000)
    # a Nimbus without a leader answers getLeader with no result (Storm's server: null), which
    # the client sees as an error: that seed is passed over like a dead one
    with pytest.raises(NimbusLeaderNotFound) as error:
        ctl.cluster_summary()
    assert f"{dead[0]}:{dead[1]}" in str(error.value) and f"{alive[0]}:{alive[1]}" in str(
        error.value
    )
    assert daemons["first"][0].calls == ["getLeader"]


def test_one_address_is_used_as_it_is():
    ctl = NimbusCtl.of([("nimbus-a", 7000)])
    assert (ctl.host, ctl.port) == ("nimbus-a", 7000) and ctl.address() == ("nimbus-a", 7000)
    assert NimbusCtl("h", 1).address() == ("h", 1)
