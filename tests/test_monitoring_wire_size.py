"""The tuple size from the workers' Netty totals (scheduler_py/monitoring/wire_size.py), the
record fields that carry them (contract §1.1) and the path to the throughput model's payload."""

from __future__ import annotations

import dataclasses

import pytest

from scheduler_py.model.types import Component, Edge, Topology
from scheduler_py.monitoring.measured import NotUsable, apply_costs, costs_from_aggregate
from scheduler_py.monitoring.records import (
    CorruptRecord,
    Route,
    WindowRecord,
    record_document,
    validate,
)
from scheduler_py.monitoring.traffic_source import estimate_topologies
from scheduler_py.monitoring.wire_size import (
    ACK_MESSAGE_BYTES,
    TASK_MESSAGE_FRAMING,
    wire_size,
)
from tests.test_monitoring_pair_estimate import END, counts, record

PAYLOAD = 200.0
"""the user tuples' bytes (framing left out) the tests' workers wrote"""
RATE = 100.0
"""spout tuples per second"""


def spout_and_bolt(seconds: int = 10) -> list[WindowRecord]:
    """Spout ``s`` (task 1) on worker ``a``; bolt ``b`` (task 2) and the acker (task 3) on
    worker ``b``. Per spout tuple: the tuple to ``b`` and its ``__ack_init`` leave ``a``, the
    bolt's ack stays in ``b``, the acker's completion leaves ``b``."""
    n = RATE * seconds
    on_a = record(
        6700,
        {1: "s"},
        [counts(1, "s", {"default": n, "__ack_init": n})],
        [Route("s", "default", "b", "shuffle")],
        host="a",
        seconds=seconds,
        netty_sent_messages=int(2 * n),
        netty_written_bytes=int(n * (PAYLOAD + TASK_MESSAGE_FRAMING) + n * ACK_MESSAGE_BYTES),
    )
    on_b = record(
        6700,
        {2: "b", 3: "__acker"},
        [
            counts(2, "b", {"__ack_ack": n}, {"s:default": n}),
            counts(3, "__acker", {"__ack_ack": n}, {"s:__ack_init": n, "b:__ack_ack": n}),
        ],
        [],
        host="b",
        seconds=seconds,
        netty_sent_messages=int(n),
        netty_written_bytes=int(n * ACK_MESSAGE_BYTES),
    )
    return [on_a, on_b]


def test_the_acking_messages_are_taken_out_of_the_bytes_per_user_tuple() -> None:
    records = spout_and_bolt()
    # what the pair estimate says: the user tuples cross, the acking pairs are Storm's
    pairs = {(1, 2): RATE, (1, 3): RATE, (2, 3): RATE, (3, 1): RATE}
    wire = wire_size(records, pairs)
    assert wire is not None
    assert wire.sent_per_s == pytest.approx(3 * RATE)
    assert wire.crossing_per_s == pytest.approx(RATE)
    assert wire.acking_per_s == pytest.approx(2 * RATE)
    assert wire.payload_bytes == pytest.approx(PAYLOAD)
    # bytes per message alone would have put it at less than half
    assert wire.written_per_s / wire.sent_per_s < PAYLOAD / 2


def test_through_the_aggregation_the_estimate_finds_the_same_size() -> None:
    traffic = estimate_topologies(spout_and_bolt(), END - 60_000)["t"]
    assert traffic.wire is not None
    fields = traffic.document_fields()["wire"]
    assert fields["payload_bytes"] == pytest.approx(PAYLOAD, rel=0.02)
    assert fields["workers"] == 2


def test_no_size_without_totals_or_without_traffic_between_workers() -> None:
    bare = [dataclasses.replace(r, netty_sent_messages=None) for r in spout_and_bolt()]
    assert wire_size(bare, {(1, 2): RATE}) is None
    # the totals are there but no user tuple crosses workers: nothing to divide
    wire = wire_size(spout_and_bolt(), {(1, 3): RATE})
    assert wire is not None and wire.payload_bytes is None
    assert "payload_bytes" not in wire.document_fields()
    # a sender without totals is not counted as crossing (its bytes are not in the sum)
    a, b = spout_and_bolt()
    silent_a = dataclasses.replace(a, netty_written_bytes=None)
    wire = wire_size([silent_a, b], {(1, 2): RATE})
    assert wire is not None and wire.crossing_per_s == 0.0


def test_the_record_fields_are_optional_counts_and_round_trip() -> None:
    a, _ = spout_and_bolt()
    document = record_document(a)
    assert document["netty_sent_messages"] == a.netty_sent_messages
    assert document["netty_written_bytes"] == a.netty_written_bytes
    again = validate(document)
    assert again.netty_written_bytes == a.netty_written_bytes
    del document["netty_written_bytes"]
    assert validate(document).netty_written_bytes is None
    for bad in (-1, 2.5, "12", True):
        with pytest.raises(CorruptRecord, match="netty_sent_messages must be an integer >= 0"):
            validate(record_document(a) | {"netty_sent_messages": bad})


def test_the_measured_size_reaches_the_topology_and_its_note() -> None:
    topology = Topology(
        "t",
        (Component("s", 1, cpu=10.0, is_spout=True), Component("b", 1, cpu=10.0)),
        (Edge("s", "b", 1.0),),
    )
    aggregate = {
        "v": 1,
        "topology_id": "t",
        "computed_at_ms": END,
        "window_start_ms": END - 60_000,
        "window_end_ms": END,
        "windows": 6,
        "executors": [
            {"task_start": 1, "task_end": 1, "component": "s", "cpu_percent": 20.0},
            {"task_start": 2, "task_end": 2, "component": "b", "cpu_percent": 30.0},
        ],
        "pairs": [{"src": [1, 1], "dst": [2, 2], "tuples_per_s": RATE}],
        "wire": {"sent_messages_per_s": 3 * RATE, "payload_bytes": PAYLOAD},
    }
    storm = {"s#0": (1, 1), "b#0": (2, 2)}
    costs = costs_from_aggregate(aggregate, topology, storm, END, 180.0)
    assert costs.payload_bytes == PAYLOAD
    assert "200 B per tuple between workers" in costs.note
    assert apply_costs(topology, costs).payload_bytes == PAYLOAD
    # an aggregate without the field (exact mode, older aggregators) measures no size
    plain = costs_from_aggregate(
        {k: v for k, v in aggregate.items() if k != "wire"}, topology, storm, END, 180.0
    )
    assert plain.payload_bytes == 0.0
    assert apply_costs(topology, plain).payload_bytes == 0.0
    with pytest.raises(NotUsable, match=r"wire\.payload_bytes"):
        costs_from_aggregate(
            aggregate | {"wire": {"payload_bytes": "big"}}, topology, storm, END, 180.0
        )
