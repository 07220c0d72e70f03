"""Property: whatever valid version-2 records say (any routes, groupings, counts, silent
tasks, resets, sample rates), the pair estimate never raises, its rates are finite and
non-negative, and every route is either priced or declared with a reason; malformed
version-2 fields are corrupt records, never a crash."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_py.monitoring.pair_estimate import estimate_pairs
from scheduler_py.monitoring.records import (
    CorruptRecord,
    ExecutorSample,
    Route,
    TaskCounts,
    WindowRecord,
    record_document,
    validate,
)

COMPONENTS = ("a", "b", "c")
GROUPINGS = (
    "shuffle",
    "local_or_shuffle",
    "fields",
    "all",
    "global",
    "none",
    "direct",
    "custom",
    "partial_key",
    "something-new",
)
counts_value = st.floats(min_value=0, max_value=1e6, allow_nan=False)


@st.composite
def records(draw):
    tasks = {t: draw(st.sampled_from(COMPONENTS)) for t in range(1, draw(st.integers(2, 7)))}
    routes = tuple(
        Route(s, draw(st.sampled_from(("default", "x"))), t, draw(st.sampled_from(GROUPINGS)))
        for s in COMPONENTS
        for t in COMPONENTS
        if s != t and draw(st.booleans())
    )
    workers = draw(st.integers(1, 3))
    out = []
    for w in range(workers):
        mine = {t: c for t, c in tasks.items() if t % workers == w}
        if not mine:
            continue
        counted = [
            TaskCounts(
                t,
                c,
                {s: draw(counts_value) for s in ("default", "x") if draw(st.booleans())},
                {},
                {
                    f"{k}:{s}": draw(counts_value)
                    for k in COMPONENTS
                    for s in ("default",)
                    if draw(st.booleans())
                },
                {},
                {},
                {},
            )
            for t, c in mine.items()
            if draw(st.booleans())
        ]
        out.append(
            WindowRecord(
                topology_id="t",
                supervisor_id=f"s{w}",
                host=f"h{w % 2}",
                port=6700 + w,
                seq=0,
                window_start_ms=0,
                window_end_ms=draw(st.integers(1, 20_000)),
                worker_cpu_ms=1.0,
                overhead_cpu_ms=0.0,
                executors=tuple(ExecutorSample(t, t, c, 1.0, 0.0) for t, c in sorted(mine.items())),
                version=2,
                mode="counts",
                sample_rate=draw(st.sampled_from((0.0, 0.05, 1.0, None))),
                load_aware_messaging=draw(st.sampled_from((True, False, None))),
                task_counts=tuple(counted),
                routes=routes,
                reset_counters=draw(st.sampled_from((0, 0, 0, 2))),
            )
        )
    return out


@settings(max_examples=200, deadline=None)
@given(records())
def test_estimate_never_raises_and_prices_or_declares_every_route(window):
    estimate = estimate_pairs(window)
    for rate in estimate.tuples_per_s.values():
        assert math.isfinite(rate) and rate >= 0
    for edge in estimate.declared:
        assert edge.reason
    # every record round-trips through its contract document
    for record in window:
        assert validate(record_document(record)) == record


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(
        (
            "mode",
            "task_counts",
            "routes",
            "tuple_bytes",
            "reset_counters",
            "sample_rate",
            "load_aware_messaging",
        )
    ),
    st.one_of(
        st.none(),
        st.integers(-5, 5),
        st.text(max_size=3),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=2), st.integers(-3, 3), max_size=2),
    ),
)
def test_malformed_v2_fields_are_corrupt_not_a_crash(name, value):
    record = WindowRecord(
        topology_id="t",
        supervisor_id="s",
        host="h",
        port=6700,
        seq=0,
        window_start_ms=0,
        window_end_ms=10_000,
        worker_cpu_ms=1.0,
        overhead_cpu_ms=0.0,
        executors=(ExecutorSample(1, 1, "a", 1.0, 0.0),),
        version=2,
        mode="counts",
    )
    doc = record_document(record)
    doc[name] = value
    try:
        validate(doc)
    except CorruptRecord as error:
        assert str(error)
