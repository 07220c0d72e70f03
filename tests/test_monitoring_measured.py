"""Aggregate → model costs, and the brain planning with them (no Spark, no ZooKeeper:
aggregates come from a :class:`StaticAggregates` source).

Word count as the snapshot builder numbers it: __acker tasks 1-3, count 4-6, split 7-9,
spout 10-11 (one task per executor)."""

from __future__ import annotations

import pytest

from scheduler_py.monitoring.measured import (
    DEFAULT_MAX_AGE_SECS,
    MAX_AGE_KEY,
    NotUsable,
    StaticAggregates,
    _RangeMap,
    apply_costs,
    costs_from_aggregate,
    measured_topology,
)
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.wire import wire
from tests.snapshots import answer, snapshot, supervisor, view_of, wordcount

NOW = 10_000_000
SUPERVISORS = [
    supervisor("sup-a", (6700, 6701)),
    supervisor("sup-b", (6710, 6711)),
    supervisor("sup-c", (6720, 6721)),
]
ACKER, COUNT, SPLIT, SPOUT = (1, 2, 3), (4, 5, 6), (7, 8, 9), (10, 11)


def aggregate(executors=None, pairs=None, computed_at=NOW - 5_000, windows=6, **extra):
    """A contract §4 aggregate of word count: every executor, spout → split → count."""
    if executors is None:
        executors = {t: 5.0 for t in ACKER + COUNT + SPLIT + SPOUT}
        executors[8] = 40.0  # one busy splitter
    if pairs is None:
        pairs = []
        for s in SPOUT:
            for d in SPLIT:
                pairs.append((s, d, 10.0, 1000.0))
        for s in SPLIT:
            for d in COUNT:
                pairs.append((s, d, 30.0, 900.0))
    document = {
        "v": 1,
        "topology_id": "wc-1",
        "computed_at_ms": computed_at,
        "window_start_ms": computed_at - 60_000,
        "window_end_ms": computed_at - 1_000,
        "windows": windows,
        "executors": [
            {"task_start": t, "task_end": t, "component": "?", "cpu_percent": cpu}
            for t, cpu in executors.items()
        ],
        "pairs": [
            {"src": [s, s], "dst": [d, d], "tuples_per_s": n, "bytes_per_s": b}
            for s, d, n, b in pairs
        ],
    }
    document.update(extra)
    return document


def source(document):
    return StaticAggregates({"wc-1": document} if document else {}, clock=lambda: NOW)


def view(document, conf=None):
    snap = snapshot(SUPERVISORS, [wordcount(conf=conf)])
    return view_of(snap, costs=source(document))


def test_fresh_aggregate_sets_cpu_and_bytes_traffic():
    v = view(aggregate())
    topology = v.problem.topology
    assert v.costs == "measured (6 windows, 59 s, bytes/s, exact pairs)"
    assert topology.executor_cpu["split#1"] == 40.0
    assert topology.executor_by_id["split#1"].cpu == 40.0
    assert topology.executor_by_id["count#0"].cpu == 5.0
    assert topology.pair_traffic[("spout#0", "split#2")] == 1000.0
    assert topology.pair_traffic[("split#0", "count#1")] == 900.0
    assert len(topology.pair_traffic) == 2 * 3 + 3 * 3
    edges = {(e.source, e.target): e.traffic for e in topology.merged_edges}
    assert edges[("spout", "split")] == pytest.approx(6000.0)
    assert edges[("split", "count")] == pytest.approx(8100.0)
    assert edges[("spout", "__acker")] == 0.0  # declared but not measured


def test_tuples_when_no_bytes_and_mean_size_for_unsized_pairs():
    pairs = [(10, 7, 10.0, 0.0), (11, 7, 10.0, 0.0)]
    v = view(aggregate(pairs=pairs))
    assert v.costs.endswith("tuples/s, exact pairs)")
    assert v.problem.topology.pair_traffic[("spout#0", "split#0")] == 10.0
    pairs = [(10, 7, 10.0, 500.0), (11, 7, 10.0, 0.0)]
    topology = view(aggregate(pairs=pairs)).problem.topology
    assert topology.pair_traffic[("spout#1", "split#0")] == pytest.approx(500.0)  # 50 B/tuple


def test_unmeasured_executors_keep_declared_cpu_and_get_mean_traffic():
    executors = {t: 5.0 for t in ACKER + COUNT + SPLIT + (10,)}  # spout task 11 unmeasured
    pairs = [(10, d, 12.0, 120.0) for d in SPLIT]
    v = view(aggregate(executors=executors, pairs=pairs))
    topology = v.problem.topology
    assert v.costs == "measured (6 windows, 59 s, bytes/s, exact pairs; 1 executor(s) not measured)"
    assert topology.executor_by_id["spout#1"].cpu == 10.0  # declared (snapshots.wordcount)
    assert "spout#1" not in topology.executor_cpu
    for target in ("split#0", "split#1", "split#2"):
        assert topology.pair_traffic[("spout#1", target)] == pytest.approx(120.0)


@pytest.mark.parametrize(
    ("document", "conf", "reason"),
    [
        (None, None, "declared (no aggregate)"),
        (aggregate(computed_at=NOW - 200_000), None, "aggregate 200 s old > " + MAX_AGE_KEY),
        (aggregate(computed_at=NOW - 100_000), {MAX_AGE_KEY: 60}, "aggregate 100 s old"),
        (aggregate(windows=0), None, "no window"),
        (aggregate(executors={}), None, "lists no executor"),
        (aggregate(v=2), None, "version 2"),
        (aggregate(computed_at=NOW + 3_600_000), None, "in the future"),
        (aggregate(pairs=[("x", 1, 1, 1)]), None, "malformed aggregate"),
        (aggregate(), {MAX_AGE_KEY: "soon"}, "must be a number of seconds"),
    ],
)
def test_unusable_aggregates_leave_declared_costs(document, conf, reason):
    v = view(document, conf)
    assert v.costs.startswith("declared (")
    assert reason in v.costs
    assert not v.problem.topology.executor_cpu and not v.problem.topology.pair_traffic


def test_fresh_within_max_age_from_conf():
    document = aggregate(computed_at=NOW - 100_000)
    assert view(document).costs.startswith("measured")  # default 180 s
    assert view(document, {MAX_AGE_KEY: 90}).costs.startswith("declared")
    assert DEFAULT_MAX_AGE_SECS == 180


def test_the_source_says_why_an_aggregate_is_stale_with_its_age():
    """The trigger asks the same rule as the rounds (``MeasuredCostsSource.stale``)."""
    source = StaticAggregates(clock=lambda: NOW)
    assert source.stale(aggregate(), {}) is None
    old = aggregate(computed_at=NOW - 200_000)
    assert source.stale(old, {}) == f"stale: aggregate 200 s old > {MAX_AGE_KEY} = 180"
    assert source.stale(aggregate(computed_at=NOW - 100_000), {MAX_AGE_KEY: 60}) == (
        f"stale: aggregate 100 s old > {MAX_AGE_KEY} = 60"
    )
    assert source.stale(old, {MAX_AGE_KEY: 900}) is None
    assert "must be a number" in source.stale(old, {MAX_AGE_KEY: "soon"})
    assert view(old).costs.startswith("declared (stale: aggregate 200 s old")


def test_stale_newest_window_is_not_fresh():
    document = aggregate(window_end_ms=NOW - 500_000)
    with pytest.raises(NotUsable, match="newest window 500 s old"):
        costs_from_aggregate(document, view(None).problem.topology, view(None).storm_executor, NOW)


def test_ranges_map_exactly_or_by_containment_and_stale_ones_are_dropped():
    base = view(None)
    document = aggregate(
        executors={4: 7.0, 99: 50.0},  # 99: an executor that no longer exists
        pairs=[(4, 99, 1.0, 10.0), (4, 1, 2.0, 20.0)],
    )
    costs = costs_from_aggregate(document, base.problem.topology, base.storm_executor, NOW)
    assert costs.executor_cpu == {"count#0": 7.0}
    assert costs.pair_traffic[("count#0", "__acker#0")] == 20.0
    assert not any("99" in src + dst for src, dst in costs.pair_traffic)
    # count#1 and count#2 are not measured: the edge's mean per-pair rate (20 / 3)
    assert costs.pair_traffic[("count#2", "__acker#1")] == pytest.approx(20 / 3)
    assert len(costs.pair_traffic) == 1 + 2 * 3
    measured = apply_costs(base.problem.topology, costs)
    assert measured.executor_by_id["count#0"].cpu == 7.0
    ranges = _RangeMap({"a#0": (1, 3), "b#0": (4, 4)})
    assert ranges.get((2, 2)) == "a#0" and ranges.get((1, 3)) == "a#0"
    assert ranges.get((4, 4)) == "b#0" and ranges.get((3, 4)) is None


def test_measured_edge_missing_from_the_declared_graph_is_added():
    base = view(None)
    document = aggregate(pairs=[(1, 10, 5.0, 50.0)])  # __acker -> spout (ack back-edge)
    topology, note = measured_topology(
        base.problem.topology, base.storm_executor, {}, source(document)
    )
    assert note.startswith("measured")
    added = [e for e in topology.edges if (e.source, e.target) == ("__acker", "spout")]
    assert added and added[0].traffic == 50.0 and added[0].grouping == "unknown"


def test_a_broken_source_never_costs_the_round():
    class Broken(StaticAggregates):
        def aggregate(self, topology_id):
            raise RuntimeError("boom")

    base = view(None)
    topology, note = measured_topology(base.problem.topology, base.storm_executor, {}, Broken())
    assert note == "declared (measured costs failed: RuntimeError: boom)"
    assert topology is base.problem.topology


def test_plan_reason_says_which_costs():
    snap = snapshot(SUPERVISORS, [wordcount()])
    reply, records = answer(snap, RoundConfig("td", costs=source(aggregate())))
    (plan,) = reply.plans
    assert plan.decision == wire().Decision.PLACE
    assert plan.reason.endswith("costs: measured (6 windows, 59 s, bytes/s, exact pairs)")
    assert records[0].summary["costs"].startswith("measured")
    reply, records = answer(snap, RoundConfig("td"))
    assert reply.plans[0].reason.endswith("; costs: declared")


def test_measured_cpu_changes_the_plan():
    """td consolidates the declared word count (11 × 10 %) on one 400 % node; measured at
    150 % per split executor it cannot, and the busy splitters end up apart."""
    snap = snapshot(SUPERVISORS, [wordcount()])
    declared, _ = answer(snap, RoundConfig("td"))
    assert len({p.supervisor_id for p in declared.plans[0].placements}) == 1
    executors = {t: 5.0 for t in ACKER + COUNT + SPOUT}
    executors.update({t: 150.0 for t in SPLIT})
    reply, _ = answer(snap, RoundConfig("td", costs=source(aggregate(executors))))
    (plan,) = reply.plans
    assert plan.decision == wire().Decision.PLACE, plan.reason
    split_nodes = [p.supervisor_id for p in plan.placements if p.executor.component == "split"]
    assert len(set(split_nodes)) >= 2
    assert "max node CPU" in plan.reason and "costs: measured" in plan.reason


def _counts_mode_pairs():
    """spout → split only (tuples/s, no bytes): split → count is a declared edge."""
    return [(s, d, 10.0, 0.0) for s in SPOUT for d in SPLIT]


def test_estimated_pairs_say_so_in_the_note():
    v = view(aggregate(pairs=_counts_mode_pairs(), traffic_source="estimated"))
    assert v.costs == "measured (6 windows, 59 s, tuples/s, pairs estimated from Storm's counts)"


def test_a_declared_edge_with_a_counted_total_is_split_uniformly():
    edge = {
        "from": "split",
        "to": "count",
        "stream": "default",
        "grouping": "custom",
        "reason": "grouping 'custom' is not modelled",
        "tuples_per_s": 90.0,
    }
    v = view(
        aggregate(pairs=_counts_mode_pairs(), traffic_source="estimated", declared_edges=[edge])
    )
    assert v.costs.endswith("edges priced as declared: split->count)")
    topology = v.problem.topology
    split = [e.id for e in topology.executors_of("split")]
    count = [e.id for e in topology.executors_of("count")]
    rates = {(s, d): topology.pair_traffic.get((s, d)) for s in split for d in count}
    assert all(rate == pytest.approx(10.0) for rate in rates.values())  # 90 / (3 × 3)


def test_a_declared_edge_without_a_total_takes_its_declared_weight_scaled():
    edge = {
        "from": "split",
        "to": "count",
        "stream": "default",
        "grouping": "direct",
        "reason": "source task(s) [7] of split reported no counts",
        "tuples_per_s": None,
    }
    v = view(
        aggregate(pairs=_counts_mode_pairs(), traffic_source="estimated", declared_edges=[edge])
    )
    topology = v.problem.topology
    from scheduler_py.model.flows import declared_weights

    declared = view(None).problem.topology
    weights = declared_weights(declared)
    measured_total = 10.0 * len(SPOUT) * len(SPLIT)
    expected = weights[("split", "count")] * measured_total / weights[("spout", "split")]
    split_count = sum(
        rate
        for (s, d), rate in topology.pair_traffic.items()
        if s.startswith("split") and d.startswith("count")
    )
    assert split_count == pytest.approx(expected)


def test_declared_edges_with_nothing_to_scale_by_leave_the_traffic_declared():
    edges = [
        {
            "from": a,
            "to": b,
            "stream": "default",
            "grouping": "custom",
            "reason": "x",
            "tuples_per_s": None,
        }
        for a, b in (("spout", "split"), ("split", "count"))
    ]
    v = view(aggregate(pairs=[], traffic_source="estimated", declared_edges=edges))
    assert "traffic declared" in v.costs
    assert not v.problem.topology.has_measured_traffic
    assert v.problem.topology.executor_cpu  # the CPU is still measured


def test_cpu_per_tuple_is_measured_against_tuples_and_capped_by_execute_latency():
    # CPU (aggregate()): spouts 5 + 5 %, splits 5 + 40 + 5 %, counts 3 × 5 %; the spouts emit
    # 60 tuples/s to the splits, which send 90 to the counts
    components = {
        "split": {"execute_ms": 0.5},
        "count": {"execute_ms": 0.0},  # no time measured: not used
        "spout": {},  # spouts have no execute latency
        "gone": {"execute_ms": 3.0},  # not a component of the topology
    }
    pairs = [(s, d, 10.0, 0.0) for s in SPOUT for d in SPLIT]
    pairs += [(s, d, 10.0, 0.0) for s in SPLIT for d in COUNT]
    counted = view(aggregate(pairs=pairs, components=components)).problem.topology
    assert counted.work_seconds == pytest.approx(
        {"spout": 0.10 / 60, "split": 0.0005, "count": 0.15 / 90}
    )
    # the same tuple rates priced in bytes (exact mode): still per tuple, not per byte
    sized = [(s, d, n, 800.0 * n) for s, d, n, _ in pairs]
    exact = view(aggregate(pairs=sized, components=components)).problem.topology
    assert exact.pair_traffic[("spout#0", "split#0")] == 8000.0
    assert exact.work_seconds == pytest.approx(counted.work_seconds)
    # without latencies a bolt's thread CPU stands, its idle wait included
    plain = view(aggregate(pairs=pairs)).problem.topology
    assert plain.work_seconds["split"] == pytest.approx(0.50 / 60)


@pytest.mark.parametrize(
    "components",
    [
        {"split": {"execute_ms": "slow"}},
        {"split": {"execute_ms": float("nan")}},
        ["split"],
    ],
)
def test_a_malformed_execute_latency_leaves_the_declared_costs(components):
    v = view(aggregate(components=components))
    assert v.costs.startswith("declared (malformed aggregate: ")
    assert not v.problem.topology.work_seconds
