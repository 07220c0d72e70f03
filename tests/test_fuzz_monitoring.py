"""Fuzzing what the aggregation and the brain read from ZooKeeper (docs/reliability.md): the
worker monitors' window records and live counters, the aggregates and the change-signal
references, corrupted — random bytes, cut gzip, cut JSON, a JSON value that is not an object,
wrong types and missing fields drawn by hypothesis — and read through the same code as from a
real ZooKeeper, over the in-memory one of tests/test_live.py. Every corrupt znode is counted
(window records), warned about (live counters) or leaves the declared costs in place
(aggregates) and is skipped; the good znodes beside it are still read; nothing raises and
nothing logs a traceback. The inputs each property ran are printed (tests/fuzz_report.py)."""

from __future__ import annotations

import copy
import gzip
import json
import logging
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.dashboard import aggregate_shape
from scheduler_py.monitoring import znodes
from scheduler_py.monitoring.change import apply_change, reference_document
from scheduler_py.monitoring.documents import parse_windows
from scheduler_py.monitoring.live import read_live
from scheduler_py.monitoring.measured import ZooKeeperAggregates
from scheduler_py.monitoring.records import CorruptRecord, decode, encode, flatten, record_document
from scheduler_py.monitoring.synthetic import Shape, records
from scheduler_py.monitoring.zk import MonitorStore
from scheduler_py.scheduling.round import PLACE, RoundConfig, plan_round
from scheduler_py.service.snapshot import to_state
from tests import fuzz_report
from tests.dashboard_fakes import aggregate
from tests.snapshots import snapshot, supervisor, wordcount
from tests.test_fuzz_inputs import ODD_VALUES, _paths
from tests.test_live import FakeClient, worker_doc

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TOPOLOGY = "t-fuzz"
NOW_MS = 1_795_250_710_000
GOOD = records(TOPOLOGY, Shape(executors=8, workers=2), NOW_MS, 2)
"""two windows of each of two workers, as a worker monitor publishes them"""

BROKEN = ("random bytes", "gzip of random bytes", "cut gzip", "cut JSON", "not an object")
"""ways of corrupting a znode that no reader may accept"""
KINDS = (*BROKEN, "wrong or missing fields")


@contextmanager
def logged() -> Iterator[list[logging.LogRecord]]:
    """Every log record of every logger while the block runs (at DEBUG and above)."""
    caught: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            caught.append(record)

    root, handler = logging.getLogger(), Keep(logging.DEBUG)
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield caught
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def no_traceback(caught: list[logging.LogRecord]) -> None:
    bad = [r for r in caught if r.exc_info or r.levelno >= logging.ERROR]
    assert bad == [], [f"{r.name}: {r.getMessage()}" for r in bad]


@st.composite
def corrupted(draw, document: dict[str, Any], gzipped: bool = True) -> tuple[str, bytes]:
    """``(kind, data)``: ``document`` as a znode holds it, corrupted one of :data:`KINDS` ways
    (``gzipped``: the znode holds gzip of the JSON, as window records and aggregates do;
    otherwise plain UTF-8 JSON, as live counters do)."""
    kind = draw(st.sampled_from(KINDS))

    def pack(text: bytes) -> bytes:
        return gzip.compress(text, mtime=0) if gzipped else text

    whole = pack(json.dumps(document).encode())
    if kind == "random bytes":
        data = draw(st.binary(max_size=300))
    elif kind == "gzip of random bytes":
        data = gzip.compress(draw(st.binary(max_size=300)), mtime=0)
    elif kind == "cut gzip":
        data = whole[: draw(st.integers(0, len(whole) - 1))]
    elif kind == "cut JSON":
        text = json.dumps(document).encode()
        data = pack(text[: draw(st.integers(0, len(text) - 1))])
    elif kind == "not an object":
        value = draw(st.one_of(ODD_VALUES, st.lists(st.integers(), max_size=3)))
        value = value if not isinstance(value, dict) else [value]
        data = pack(json.dumps(value, allow_nan=True).encode())
    else:
        mutated = copy.deepcopy(document)
        paths = list(_paths(mutated))
        for _ in range(draw(st.integers(1, 3))):
            path = draw(st.sampled_from(paths))
            parent: Any = mutated
            try:
                for step in path[:-1]:
                    parent = parent[step]
                if draw(st.booleans()):
                    parent[path[-1]] = draw(ODD_VALUES)
                else:
                    del parent[path[-1]]
            except (KeyError, IndexError, TypeError):
                continue  # an earlier mutation removed or replaced this path
        data = pack(json.dumps(mutated, allow_nan=True).encode())
    return kind, data


# -- window records (contract §1) ---------------------------------------------------------


@st.composite
def window_znodes(draw) -> list[tuple[str, bytes, Any]]:
    """Window znodes of two workers: ``(kind, data, the good record or None)`` each."""
    znodes_ = []
    for _ in range(draw(st.integers(1, 8))):
        record = draw(st.sampled_from(GOOD))
        if draw(st.booleans()):
            znodes_.append(("good", encode(record_document(record)), record))
        else:
            kind, data = draw(corrupted(record_document(record)))
            znodes_.append((kind, data, record))
    return znodes_


@FUZZ
@given(window_znodes())
def test_corrupt_window_records_are_counted_and_skipped(windows):
    fuzz_report.ran("window records read from ZooKeeper")
    fuzz_report.ran("window records read from ZooKeeper: znodes", len(windows))
    root = f"/fuzz-{uuid.uuid4().hex[:8]}"
    nodes: dict[str, bytes | None] = {}
    for index, (_, data, record) in enumerate(windows):
        nodes[f"{znodes.monitor_path(root, TOPOLOGY, record.worker)}/w-{index}"] = data
    with logged() as caught:
        raw = MonitorStore(FakeClient(nodes), root).load_windows(TOPOLOGY)
        parsed = parse_windows(raw, now_ms=NOW_MS)
        flatten(parsed.records, traffic_after_ms=NOW_MS - 60_000)
    no_traceback(caught)
    assert len(raw) == len(windows)
    corrupt = parsed.corrupt[TOPOLOGY]
    assert len(parsed.records) + corrupt == len(windows)
    good = Counter(record for kind, _, record in windows if kind == "good")
    assert not good - Counter(parsed.records), "a good record next to corrupt ones was lost"
    assert corrupt >= sum(kind in BROKEN for kind, _, _ in windows)
    assert len(parsed.reasons[TOPOLOGY]) == min(5, corrupt)
    for reason in parsed.reasons[TOPOLOGY]:
        assert reason.split(": ", 1)[1], f"a reason must say what is wrong: {reason}"
    fuzz_report.ran("window records read from ZooKeeper: corrupt znodes counted", corrupt)


# -- live counters (contract §5) ----------------------------------------------------------


@st.composite
def live_znodes(draw) -> list[tuple[str, bytes]]:
    znodes_ = []
    for port in range(6700, 6700 + draw(st.integers(1, 5))):
        document = worker_doc("sup-a", port)
        if draw(st.booleans()):
            znodes_.append(("good", json.dumps(document).encode()))
        else:
            znodes_.append(draw(corrupted(document, gzipped=False)))
    return znodes_


@FUZZ
@given(live_znodes())
def test_corrupt_live_counters_are_warned_about_and_skipped(workers):
    fuzz_report.ran("live counters read from ZooKeeper")
    root = f"/fuzz-{uuid.uuid4().hex[:8]}"  # a new path: read_live warns once per path
    base = znodes.live_path(root, "wc-1-2")
    names = [f"sup-a:{6700 + i}" for i in range(len(workers))]
    nodes = {f"{base}/{name}": data for name, (_, data) in zip(names, workers, strict=True)}
    with logged() as caught:
        live = read_live(FakeClient(nodes), "wc-1-2", root=root)
    no_traceback(caught)
    kinds = dict(zip(names, (kind for kind, _ in workers), strict=True))
    assert {n for n, k in kinds.items() if k == "good"} <= set(live)
    assert not {n for n, k in kinds.items() if k in BROKEN} & set(live)
    warned = [r for r in caught if r.name == "scheduler_py.monitoring.live"]
    assert len(warned) == len(names) - len(live)
    assert all(r.levelno == logging.WARNING for r in warned)


# -- aggregates (contract §4), as the brain and the dashboard read them ---------------------


def fresh_aggregate() -> dict[str, Any]:
    """The word count aggregate of tests/dashboard_fakes.py, computed 5 s before
    :data:`NOW_MS` (the brain's clock in these tests)."""
    return aggregate() | {"computed_at_ms": NOW_MS - 5000, "window_end_ms": NOW_MS - 5000}


@st.composite
def aggregate_znodes(draw) -> tuple[str, bytes]:
    if draw(st.integers(0, 9)) == 0:
        return "good", encode(fresh_aggregate())
    return draw(corrupted(fresh_aggregate()))


@FUZZ
@given(aggregate_znodes())
def test_a_corrupt_aggregate_leaves_the_round_on_declared_costs(znode):
    fuzz_report.ran("aggregates read from ZooKeeper")
    kind, data = znode
    source = ZooKeeperAggregates("fake-zk:2181", "/fuzz", cache_secs=0.0)
    client = FakeClient({znodes.aggregate_path("/fuzz", "wc-1"): data})
    client.connected = True
    source._client = client  # the background connection, established
    source.now_ms = lambda: NOW_MS
    state = to_state(snapshot([supervisor(f"s{i}") for i in (1, 2, 3)], [wordcount()]))
    with logged() as caught:
        (decision,) = plan_round(state, RoundConfig("even", costs=source))
        try:
            document = decode(data)
        except CorruptRecord:
            document = None
        shown = aggregate_shape.clean(document)
    no_traceback(caught)
    assert decision.decision == PLACE, decision.reason
    costs = decision.reason.rsplit("costs: ", 1)[1]
    if kind == "good":
        assert costs.startswith("measured"), decision.reason
        assert shown is not None and len(shown["executors"]) == 3
    else:
        assert costs.startswith(("declared", "measured")), decision.reason
    if kind in BROKEN:
        assert costs.startswith("declared"), decision.reason
    if costs.startswith("declared"):
        fuzz_report.ran("aggregates read from ZooKeeper: left on declared costs")


@st.composite
def reference_znodes(draw) -> tuple[str, bytes]:
    reference = reference_document(fresh_aggregate())
    if draw(st.integers(0, 9)) == 0:
        return "good", encode(reference)
    return draw(corrupted(reference))


@FUZZ
@given(reference_znodes())
def test_a_corrupt_stored_reference_is_replaced(znode):
    """The aggregation's change signal reads ``<root>/reference/<topology>``: a corrupt one
    must not stop the run (it would stop every topology's aggregate, not just this one)."""
    fuzz_report.ran("change-signal references read from ZooKeeper")
    kind, data = znode
    store = MonitorStore(FakeClient({znodes.reference_path("/fuzz", "wc-1"): data}), "/fuzz")
    document = fresh_aggregate() | {"records": 6}
    with logged() as caught:
        stored = store.read_reference("wc-1")
        replacement = apply_change(document, stored)
    no_traceback(caught)
    change = document["change"]["l1_relative"]
    if replacement is not None:  # unusable or absent: the document became the reference
        assert change == 0.0 and replacement["topology_id"] == "wc-1"
    else:
        assert change is None or change >= 0.0, document["change"]
    if kind == "good":
        assert replacement is None and change == 0.0, document["change"]
    if kind in BROKEN:
        assert replacement is not None, f"{kind}: the corrupt reference was used"


def test_an_aggregate_whose_pairs_are_not_a_list_is_declared_costs_not_a_traceback():
    """Found by the aggregate property: ``"pairs": 5.0`` raised a TypeError that the brain
    logged with a traceback in every round."""
    for field in ("pairs", "executors"):
        source = ZooKeeperAggregates("fake-zk:2181", "/fuzz", cache_secs=0.0)
        client = FakeClient(
            {znodes.aggregate_path("/fuzz", "wc-1"): encode(fresh_aggregate() | {field: 5.0})}
        )
        client.connected = True
        source._client = client
        source.now_ms = lambda: NOW_MS
        state = to_state(snapshot([supervisor("s1")], [wordcount()]))
        with logged() as caught:
            (decision,) = plan_round(state, RoundConfig("even", costs=source))
        no_traceback(caught)
        assert f"costs: declared (malformed aggregate: {field} is 5.0, expected a list)" in (
            decision.reason
        )


def test_a_reference_with_a_string_for_a_number_is_replaced():
    """Found by the reference property: the aggregation run raised a TypeError (and with it,
    no topology's aggregate was written) until someone deleted the znode."""
    document = fresh_aggregate() | {"records": 6}
    stored = reference_document(fresh_aggregate())
    stored["cpu"]["7-7"] = "7.5"
    replacement = apply_change(document, stored)
    assert replacement is not None and replacement["cpu"]["7-7"] == 7.5
    assert document["change"]["l1_relative"] == 0.0
