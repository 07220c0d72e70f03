"""The Linear topology (topologies/linear/): its knobs, the spout's emit/ack/replay, the
bolts' forwarding and CPU burn, and the topology definition; pure, no cluster.

Word count's sources use the same package names (``spouts``, ``bolts``) and
tests/test_wordcount_knobs.py puts them on ``sys.path`` for good, so this module imports
Linear's with its own ``src/`` first and the cached ``spouts``/``bolts`` modules set aside,
and restores them afterwards.
"""

from __future__ import annotations

import importlib
import io
import logging
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("streamparse")

PROJECT = Path(__file__).resolve().parents[1] / "topologies" / "linear"
SRC = PROJECT / "src"
_SHARED = ("spouts", "bolts")


def _shared(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in _SHARED)


@pytest.fixture(scope="module")
def linear():
    saved = {name: sys.modules.pop(name) for name in list(sys.modules) if _shared(name)}
    sys.path.insert(0, str(SRC))
    try:
        yield SimpleNamespace(
            knobs=importlib.import_module("linear_knobs"),
            source=importlib.import_module("spouts.source"),
            stage=importlib.import_module("bolts.stage"),
        )
    finally:
        sys.path.remove(str(SRC))
        for name in [n for n in sys.modules if _shared(n)]:
            del sys.modules[name]
        sys.modules.update(saved)


def _component(cls: type, conf: dict, context: dict, emitted: list) -> object:
    comp = cls(input_stream=io.BytesIO(), output_stream=io.BytesIO(), rdb_signal=None)
    comp.logger = logging.getLogger("linear.test")
    comp.emit = lambda values, **kw: emitted.append((values, kw.get("tup_id")))
    comp.initialize(conf, context)
    return comp


class Tup:
    def __init__(self, *values: object) -> None:
        self.values = values


# --- knobs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(50, 50.0), (0.5, 0.5), ("50", 50.0), (None, 7.0), (True, 7.0), ("x", 7.0), (-1, 7.0),
     ("inf", 7.0), (0, 0.0)],
)  # fmt: skip
def test_conf_float(linear, value: object, expected: float) -> None:
    assert linear.knobs.conf_float({"k": value}, "k", 7.0) == expected
    assert linear.knobs.conf_float({}, "k", 7.0) == 7.0


def test_conf_int_and_payload(linear) -> None:
    knobs = linear.knobs
    assert knobs.conf_int({"k": "300"}, "k", 200) == 300
    assert knobs.conf_int({"k": 12.9}, "k", 200) == 12
    assert knobs.conf_int({}, "k", 200) == 200
    for size in (0, 1, 36, 200, 1000):
        text = knobs.payload(size, seed=3)
        assert len(text.encode()) == size and text.isascii()
    assert knobs.payload(-5) == ""
    assert knobs.payload(4, seed=0) == "abcd" and knobs.payload(4, seed=1) == "bcde"


def test_burn_cpu(linear) -> None:
    assert linear.knobs.burn_cpu(0) == 0
    start = time.process_time()
    assert linear.knobs.burn_cpu(20) > 0
    assert time.process_time() - start >= 0.8 * 0.020


# --- the spout -------------------------------------------------------------------------------


def test_spout_emits_with_ids_and_replays_on_fail(linear) -> None:
    emitted: list = []
    conf = {"linear.spout.interval.ms": 0, "linear.payload.bytes": 50}
    spout = _component(linear.source.LinearSpout, conf, {"taskid": 4}, emitted)
    spout.next_tuple()
    spout.next_tuple()
    (first, id1), (second, id2) = emitted
    assert second[0] == id2
    assert id1 != id2 and id1.startswith("4-") and id1.endswith("-1") and id2.endswith("-2")
    assert first[0] == id1 and len(first[1]) == 50
    assert set(spout.pending) == {id1, id2}
    spout.fail(id1)
    assert emitted[-1] == (first, id1)  # replayed: same values, same id
    spout.ack(id1)
    spout.ack(id1)  # a second ack of the same id counts once
    assert (spout.acked, spout.failed) == (1, 1)
    assert set(spout.pending) == {id2}
    spout.fail("unknown")  # a fail of an id no longer pending emits nothing
    assert len(emitted) == 3


def test_spout_defaults_and_interval(linear) -> None:
    emitted: list = []
    spout = _component(linear.source.LinearSpout, {}, {"taskid": 1}, emitted)
    assert spout.interval_s == pytest.approx(0.005)
    assert len(spout.payload) == 200
    slow = _component(
        linear.source.LinearSpout, {"linear.spout.interval.ms": "100000"}, {"taskid": 1}, emitted
    )
    slow.next_tuple()  # the first tuple is due at once
    start = time.monotonic()
    slow.next_tuple()  # the next is 100 s away: one short sleep, no emit
    assert time.monotonic() - start < 0.5
    assert len(emitted) == 1


# --- the bolts -------------------------------------------------------------------------------


def test_stage_forwards_the_id_with_its_payload(linear) -> None:
    emitted: list = []
    conf = {"linear.payload.bytes": 17}
    bolt = _component(linear.stage.StageBolt, conf, {"taskid": 2}, emitted)
    bolt.process(Tup("7-1-2-3", "x" * 500))
    assert emitted == [(["7-1-2-3", linear.knobs.payload(17, seed=2)], None)]
    assert bolt.processed == 1 and bolt.cpu_ms == 0


def test_bolts_burn_the_configured_cpu(linear) -> None:
    for cls in (linear.stage.StageBolt, linear.stage.SinkBolt):
        emitted: list = []
        bolt = _component(cls, {"linear.bolt.cpu.ms": 30}, {"taskid": 5}, emitted)
        start = time.process_time()
        bolt.process(Tup("id", "payload"))
        assert time.process_time() - start >= 0.8 * 0.030
        assert len(emitted) == (1 if cls is linear.stage.StageBolt else 0)


def test_sink_emits_nothing(linear) -> None:
    emitted: list = []
    sink = _component(linear.stage.SinkBolt, {}, {"taskid": 6}, emitted)
    for i in range(3):
        sink.process(Tup(str(i), "p"))
    assert emitted == [] and sink.processed == 3
    assert linear.stage.SinkBolt.outputs == []


# --- the topology ----------------------------------------------------------------------------


def test_topology_definition(linear) -> None:
    sys.path.insert(0, str(PROJECT / "topologies"))
    try:
        module = importlib.import_module("linear")
    finally:
        sys.path.remove(str(PROJECT / "topologies"))
        sys.modules.pop("linear", None)
    topology = module.Linear
    specs = {spec.name: spec for spec in topology.specs}
    assert {name: spec.par for name, spec in specs.items()} == {
        "spout": 2,
        "bolt1": 2,
        "bolt2": 2,
        "bolt3": 2,
    }
    chain = {
        name: [(gid.componentId, str(grouping)) for gid, grouping in spec.inputs.items()]
        for name, spec in specs.items()
    }
    assert chain == {
        "spout": [],
        "bolt1": [("spout", "SHUFFLE")],
        "bolt2": [("bolt1", "SHUFFLE")],
        "bolt3": [("bolt2", "SHUFFLE")],
    }
    assert topology.config["topology.workers"] == 3
    assert topology.config["topology.acker.executors"] == 3
    assert topology.config["linear.spout.interval.ms"] == 5
    assert topology.config["linear.bolt.cpu.ms"] == 0
    assert topology.config["linear.payload.bytes"] == 200
