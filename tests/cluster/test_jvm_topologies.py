"""The JVM benchmark topologies (``topologies/jvm/``, ``topologies/README.md``) on the real
local cluster: submitted with ``bin/storm jar`` through
:func:`scheduler_py.devtools.jvm_topologies.submit`, their ``-c`` options reach the topology
conf, every component runs, and the spouts' acked counts grow."""

from __future__ import annotations

import pytest

from scheduler_py.devtools.jvm_topologies import submit
from tests.cluster.waiting import machine_timeout, wait_until

pytestmark = pytest.mark.cluster

# executor stats reach Nimbus every executor.metrics.frequency.secs (5 s on the test cluster)
STATS_PERIOD_S = 5.0

RUNS = {
    # the JVM word count (3 workers, 1 acker: the Submit defaults), paced for a shared machine
    "jvm-wordcount": ("wordcount", {"bench.spout.rate": 200}),
    # R-Storm's Linear with a 2 KB payload and a little CPU work per tuple
    "jvm-linear": (
        "linear",
        {
            "bench.spout.rate": 100,
            "bench.payload.bytes": 2048,
            "bench.cpu.micros": 50,
            "bench.parallelism.exclaim_output_3": 1,
            "topology.workers": 2,
        },
    ),
}
EXECUTORS = {
    "jvm-wordcount": {"sentences": 1, "split": 2, "count": 2, "__acker": 1},
    "jvm-linear": {"word": 2, "exclaim1": 2, "exclaim2": 2, "exclaim_output_3": 1, "__acker": 1},
}


def _executors(cluster, name: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for run in cluster.nimbus.executor_runs(name):
        counts[run.component] = counts.get(run.component, 0) + 1
    return counts


def _wait_acked_growing(cluster, name: str) -> None:
    """Wait until ``name``'s spouts have acked tuples, then until the count grows again (one
    more stats report); the topology must report no component errors meanwhile."""
    last = {}

    def acked() -> int:
        last["state"] = cluster.nimbus.topology_state(name)
        return last["state"].acked if last["state"] else 0

    def describe() -> str:
        state = last.get("state")
        if state is None:
            return "(not listed)"
        return (
            f"(last seen: {state.status} acked={state.acked} failed={state.failed} "
            f"errors={state.errors})"
        )

    first = wait_until(acked, machine_timeout(90), f"{name}'s spouts to ack tuples", describe)
    wait_until(
        lambda: acked() > first,
        machine_timeout(4 * STATS_PERIOD_S),
        f"{name}'s acked count to grow past {first}",
        describe,
    )
    assert not last["state"].errors, f"{name} reported errors: {last['state'].errors}"


def test_wordcount_and_linear_run_with_their_options_and_ack_tuples(cluster):
    try:
        for name, (kind, conf) in RUNS.items():
            topology_id = submit(kind, name, conf, env=cluster.env)
            assert topology_id.startswith(f"{name}-"), topology_id

        for name, (_, conf) in RUNS.items():
            stored = cluster.nimbus.topology_conf(name)
            for key, value in conf.items():
                assert stored[key] == value, f"{name}: {key} is {stored.get(key)!r}, not {value!r}"
            assert stored["topology.acker.executors"] == 1

        for name, expected in EXECUTORS.items():
            wait_until(
                lambda name=name, expected=expected: _executors(cluster, name) == expected,
                machine_timeout(60),
                f"{name}'s executors {expected} to be assigned",
                lambda name=name: f"(assigned: {_executors(cluster, name)})",
            )

        for name in RUNS:
            _wait_acked_growing(cluster, name)
    finally:
        for name in RUNS:
            cluster.kill(name)
