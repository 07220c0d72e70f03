"""The pair-traffic estimate from Storm's counts (scheduler_py/monitoring/pair_estimate.py):
exactness where the margins determine the matrix, the routing priors, and every bad input."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from scheduler_py.monitoring.pair_estimate import estimate_pairs, fit_margins, routing_prior
from scheduler_py.monitoring.records import (
    ExecutorSample,
    Route,
    TaskCounts,
    TrafficSample,
    WindowRecord,
)

END = 1_800_000_000_000


def counts(task, component, emitted=None, executed=None):
    return TaskCounts(
        task, component, dict(emitted or {}), dict(emitted or {}), dict(executed or {}), {}, {}, {}
    )


def record(port, tasks, task_counts, routes, host="h1", end=END, seconds=10, **extra):
    """A v2 counts-mode record of worker ``host:port`` running ``tasks`` ({task: component})."""
    fields = {"mode": "counts", "sample_rate": 0.05, "load_aware_messaging": True}
    fields.update(extra)
    return WindowRecord(
        topology_id="t",
        supervisor_id=host,
        host=host,
        port=port,
        seq=1,
        window_start_ms=end - seconds * 1000,
        window_end_ms=end,
        worker_cpu_ms=1.0,
        overhead_cpu_ms=0.0,
        executors=tuple(ExecutorSample(t, t, c, 1.0, 0.0) for t, c in sorted(tasks.items())),
        version=2,
        task_counts=tuple(task_counts),
        routes=tuple(routes),
        **fields,
    )


def fields_topology(matrix, grouping="fields", **extra):
    """Sources 1..S of ``a`` send ``matrix[i][j]`` tuples (in a 10 s window) to targets of
    ``b`` (tasks 101..); all tasks in one worker."""
    matrix = np.asarray(matrix, dtype=float)
    sources = list(range(1, matrix.shape[0] + 1))
    targets = list(range(101, 101 + matrix.shape[1]))
    tc = [counts(s, "a", {"default": matrix[i].sum()}) for i, s in enumerate(sources)]
    tc += [
        counts(t, "b", executed={"a:default": matrix[:, j].sum()}) for j, t in enumerate(targets)
    ]
    tasks = {s: "a" for s in sources} | {t: "b" for t in targets}
    route = Route("a", "default", "b", grouping, ("word",) if grouping == "fields" else ())
    return [record(6700, tasks, tc, [route], **extra)], sources, targets


def as_matrix(estimate, sources, targets):
    return np.array([[estimate.tuples_per_s.get((s, t), 0.0) for t in targets] for s in sources])


def test_fields_grouping_with_rank_one_traffic_is_recovered_exactly():
    """Sources fed by a shuffle see the same key distribution: the matrix is the outer
    product of its margins / total, which fitting a uniform prior recovers."""
    rows = np.array([300.0, 500.0, 200.0])
    cols = np.array([100.0, 600.0, 250.0, 50.0])
    truth = np.outer(rows, cols) / rows.sum()
    records, sources, targets = fields_topology(truth)
    estimate = estimate_pairs(records)
    assert np.allclose(as_matrix(estimate, sources, targets), truth / 10.0, rtol=1e-9)
    assert estimate.source == "estimated"
    assert not estimate.declared


def test_loadaware_shuffle_within_one_worker_is_uniform_and_exact():
    truth = np.full((2, 3), 400.0)
    records, sources, targets = fields_topology(truth, grouping="shuffle")
    estimate = estimate_pairs(records)
    assert np.allclose(as_matrix(estimate, sources, targets), 40.0)


def test_loadaware_shuffle_stays_in_the_senders_worker():
    """Two workers on two hosts, each with a source and a target: load-aware shuffle keeps
    every tuple in its worker; with load-aware messaging off the split is uniform."""
    route = Route("a", "default", "b", "shuffle")

    def two_workers(aware, truth):
        return [
            record(
                6700,
                {1: "a", 11: "b"},
                [
                    counts(1, "a", {"default": truth[0].sum()}),
                    counts(11, "b", executed={"a:default": truth[:, 0].sum()}),
                ],
                [route],
                host="h1",
                load_aware_messaging=aware,
            ),
            record(
                6700,
                {2: "a", 12: "b"},
                [
                    counts(2, "a", {"default": truth[1].sum()}),
                    counts(12, "b", executed={"a:default": truth[:, 1].sum()}),
                ],
                [route],
                host="h2",
                load_aware_messaging=aware,
            ),
        ]

    local = np.array([[700.0, 0.0], [0.0, 300.0]])
    estimate = estimate_pairs(two_workers(True, local))
    assert np.allclose(as_matrix(estimate, [1, 2], [11, 12]), local / 10.0)
    uniform = np.full((2, 2), 250.0)
    estimate = estimate_pairs(two_workers(False, uniform))
    assert np.allclose(as_matrix(estimate, [1, 2], [11, 12]), uniform / 10.0)


def test_all_and_global_groupings_follow_storm():
    records, sources, targets = fields_topology(np.full((2, 3), 100.0), grouping="all")
    estimate = estimate_pairs(records)
    # each source emitted 300 tuples; with "all" every target gets each of them
    assert np.allclose(as_matrix(estimate, sources, targets), 30.0)
    records, sources, targets = fields_topology(np.array([[90.0, 0], [60.0, 0]]), "global")
    estimate = estimate_pairs(records)
    assert np.allclose(as_matrix(estimate, sources, targets), [[9.0, 0], [6.0, 0]])


def test_prior_widens_when_the_scope_cannot_carry_the_counts():
    """Worker-local targets were overloaded and Storm sent elsewhere: the margins demand
    traffic the scoped prior forbids; the fit widens and meets them."""
    prior = np.array([[1.0, 0.0], [0.0, 1.0]])
    rows, cols = np.array([100.0, 100.0]), np.array([150.0, 50.0])
    fitted = fit_margins(prior, rows, cols)
    assert np.allclose(fitted.sum(axis=1), rows, rtol=1e-3)
    assert np.allclose(fitted.sum(axis=0), cols, rtol=1e-3)


def test_local_or_shuffle_prefers_the_worker_also_without_loadaware():
    where = {1: ("w1", "h1"), 2: ("w2", "h1"), 11: ("w1", "h1"), 12: ("w2", "h1")}
    prior = routing_prior("local_or_shuffle", [1, 2], [11, 12], where, load_aware=False)
    assert np.allclose(prior, [[1, 0], [0, 1]])
    prior = routing_prior("shuffle", [1, 2], [11, 12], where, load_aware=False)
    assert np.allclose(prior, 0.5)
    # load-aware: same host, other worker, is the next scope before "anywhere"
    where = {1: ("w1", "h1"), 11: ("w2", "h1"), 12: ("w3", "h2")}
    prior = routing_prior("shuffle", [1], [11, 12], where, load_aware=True)
    assert np.allclose(prior, [[1, 0]])


def test_exact_sources_keep_their_traffic_and_the_rest_is_fitted():
    """A mixed topology: worker 1's source counted exactly by the hook, worker 2's by
    Storm; the exact pairs are subtracted from the target margins before fitting."""
    route = Route("a", "default", "b", "fields", ("w",))
    exact = WindowRecord(
        **{
            **record(6700, {1: "a", 11: "b"}, [], [route]).__dict__,
            "mode": "exact",
            "traffic": (
                TrafficSample(1, 11, "default", 100, 0),
                TrafficSample(1, 12, "default", 300, 0),
            ),
            "task_counts": (counts(11, "b", executed={"a:default": 300.0}),),
        },
    )
    counted = record(
        6701,
        {2: "a", 12: "b"},
        [counts(2, "a", {"default": 400.0}), counts(12, "b", executed={"a:default": 500.0})],
        [route],
    )
    estimate = estimate_pairs([exact, counted])
    assert estimate.source == "mixed"
    got = as_matrix(estimate, [1, 2], [11, 12])
    assert np.allclose(got, [[10.0, 30.0], [20.0, 20.0]])
    assert estimate.estimated_sources == {2}


@pytest.mark.parametrize("grouping", ["custom", "direct", "partial_key"])
def test_unknown_grouping_is_declared_the_rest_measured(grouping, caplog):
    routes = [Route("a", "default", "b", "shuffle"), Route("b", "default", "c", grouping)]
    tc = [
        counts(1, "a", {"default": 100.0}),
        counts(2, "b", {"default": 100.0}, {"a:default": 100.0}),
        counts(3, "c", executed={"b:default": 100.0}),
    ]
    estimate = estimate_pairs([record(6700, {1: "a", 2: "b", 3: "c"}, tc, routes)])
    assert estimate.tuples_per_s == {(1, 2): 10.0}
    (declared,) = estimate.declared
    assert (declared.source, declared.target, declared.grouping) == ("b", "c", grouping)
    assert "not modelled" in declared.reason
    assert declared.tuples_per_s == 10.0
    (line,) = estimate.warnings("t")
    assert f"b -[default, {grouping}]-> c priced as declared" in line


def _chain(**extra):
    routes = [Route("a", "default", "b", "shuffle"), Route("b", "default", "c", "fields", ("k",))]
    first = record(
        6700,
        {1: "a", 2: "b"},
        [
            counts(1, "a", {"default": 100.0}),
            counts(2, "b", {"default": 200.0}, {"a:default": 100.0}),
        ],
        routes,
    )
    second = record(
        6701, {3: "c"}, [counts(3, "c", executed={"b:default": 200.0})], routes, **extra
    )
    return first, second


def test_an_executor_that_reported_nothing_declares_its_edges():
    first, second = _chain()
    silent = WindowRecord(**{**second.__dict__, "task_counts": ()})
    estimate = estimate_pairs([first, silent])
    assert estimate.tuples_per_s == {(1, 2): 10.0}
    (declared,) = estimate.declared
    assert (
        declared.target == "c" and "target task(s) [3] of c reported no counts" in declared.reason
    )


def test_a_worker_missing_from_the_window_is_found_in_the_history():
    first, second = _chain()
    older = WindowRecord(
        **{**second.__dict__, "window_end_ms": END - 60_000, "window_start_ms": END - 70_000}
    )
    estimate = estimate_pairs([first], history=[older])
    (declared,) = estimate.declared
    assert "target task(s) [3] of c reported no counts" in declared.reason


def test_a_worker_that_reset_its_counters_declares_the_edges_it_touches():
    first, second = _chain(reset_counters=2)
    estimate = estimate_pairs([first, second])
    assert estimate.tuples_per_s == {(1, 2): 10.0}
    (declared,) = estimate.declared
    assert "2 counter(s) of worker h1:6701 went backwards" in declared.reason


def test_counters_going_backwards_in_a_record():
    from scheduler_py.monitoring.records import record_document, validate

    first, second = _chain()
    doc = record_document(second)
    doc["task_counts"][0]["executed"]["b:default"] = -40
    parsed = validate(doc)
    assert parsed.task_counts == () and "went backwards" in parsed.counts_problem
    estimate = estimate_pairs([first, parsed])
    (declared,) = estimate.declared
    assert "went backwards" in declared.reason and declared.target == "c"


def test_sample_rate_zero_declares_every_edge():
    first, second = _chain(sample_rate=0.0)
    estimate = estimate_pairs([first, second])
    assert estimate.tuples_per_s == {}
    assert len(estimate.declared) == 2
    assert all("sample.rate is 0" in d.reason for d in estimate.declared)


def test_v2_record_round_trips_through_its_document():
    from scheduler_py.monitoring.records import encode, parse_window, record_document

    first, _ = _chain()
    again = parse_window(encode(record_document(first)))
    assert again == first and again.routes == first.routes


def test_system_streams_are_fitted_silently():
    routes = [Route("a", "default", "b", "shuffle")]
    tc = [
        counts(1, "a", {"default": 100.0, "__ack_init": 100.0}),
        counts(2, "b", executed={"a:default": 100.0}),
        counts(7, "__acker", executed={"a:__ack_init": 100.0}),
    ]
    estimate = estimate_pairs([record(6700, {1: "a", 2: "b", 7: "__acker"}, tc, routes)])
    assert estimate.tuples_per_s == {(1, 2): 10.0, (1, 7): 10.0}
    assert not estimate.declared


def test_no_warning_logged_by_the_estimate_itself(caplog):
    caplog.set_level(logging.WARNING)
    first, second = _chain(reset_counters=1)
    estimate_pairs([first, second])
    assert not caplog.records  # the job logs estimate.warnings(), once per edge and reason


def test_counts_without_routes_say_why_nothing_was_estimated():
    first, second = _chain()
    bare = [WindowRecord(**{**r.__dict__, "routes": ()}) for r in (first, second)]
    estimate = estimate_pairs(bare)
    assert estimate.tuples_per_s == {} and estimate.source == "none"
    (line,) = estimate.warnings("t")
    assert "counts but no routes" in line
