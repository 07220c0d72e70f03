"""Synthetic window records shaped like the worker monitor's (``docs/monitoring-format.md`` §1).

Used by ``bench aggregate_scale`` (published to ZooKeeper exactly as the hooks publish them),
by the golden test of the aggregation and by the profile in docs/monitoring.md, "Monitoring cost".

The topology is a chain of components (a spout, then bolts) whose executors are spread round
robin over the workers; every executor sends to ``fan_out`` executors of the next component
(fields grouping over a large component reaches only the keys it hashes to), and every
bolt executor acks to one acker executor per worker. Numbers are drawn from a seeded
generator, so the same arguments give the same records.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from scheduler_py.monitoring.records import ExecutorSample, TrafficSample, WindowRecord

WINDOW_MS = 10_000


@dataclass(frozen=True)
class Shape:
    """How big the synthetic topology is."""

    executors: int
    workers: int
    components: int = 4
    fan_out: int = 16

    @classmethod
    def for_executors(cls, executors: int) -> Shape:
        """A plausible worker count for ``executors``: about 8 executors per worker."""
        return cls(executors=executors, workers=max(1, min(500, executors // 8)))


def records(
    topology_id: str,
    shape: Shape,
    end_ms: int,
    windows: int,
    seed: int = 1,
    window_ms: int = WINDOW_MS,
) -> list[WindowRecord]:
    """``windows`` consecutive windows of every worker, the newest ending at ``end_ms``."""
    rng = random.Random(seed)
    per_component = max(1, shape.executors // shape.components)
    components = [("spout" if c == 0 else f"bolt{c}") for c in range(shape.components)]
    tasks = {
        name: list(range(1 + c * per_component, 1 + (c + 1) * per_component))
        for c, name in enumerate(components)
    }
    worker_of = {}
    order = [task for name in components for task in tasks[name]]
    for index, task in enumerate(order):
        worker_of[task] = index % shape.workers
    component_of = {task: name for name, ts in tasks.items() for task in ts}
    acker_base = 1 + shape.components * per_component
    out = []
    for w in range(windows):
        window_end = end_ms - (windows - 1 - w) * window_ms
        by_worker: dict[int, list[ExecutorSample]] = {i: [] for i in range(shape.workers)}
        traffic: dict[int, list[TrafficSample]] = {i: [] for i in range(shape.workers)}
        for c, name in enumerate(components):
            following = tasks[components[c + 1]] if c + 1 < len(components) else []
            for task in tasks[name]:
                worker = worker_of[task]
                cpu = rng.uniform(100.0, 2000.0)
                by_worker[worker].append(ExecutorSample(task, task, component_of[task], cpu, 0.0))
                if following:
                    start = rng.randrange(len(following))
                    for k in range(min(shape.fan_out, len(following))):
                        dst = following[(start + k) % len(following)]
                        tuples = float(rng.randint(10, 5000))
                        traffic[worker].append(
                            TrafficSample(task, dst, "default", tuples, tuples * 48)
                        )
                if c > 0:
                    acker = acker_base + worker
                    tuples = float(rng.randint(10, 5000))
                    traffic[worker].append(TrafficSample(task, acker, "__ack_ack", tuples, 0.0))
        for worker in range(shape.workers):
            acker = acker_base + worker
            executors = [
                *by_worker[worker],
                ExecutorSample(acker, acker, "__acker", rng.uniform(10.0, 200.0), 0.0),
            ]
            out.append(
                WindowRecord(
                    topology_id=topology_id,
                    supervisor_id=f"sup-{worker // 4}",
                    host=f"host-{worker // 4}",
                    port=6700 + worker % 4,
                    seq=w,
                    window_start_ms=window_end - window_ms,
                    window_end_ms=window_end,
                    worker_cpu_ms=sum(e.thread_cpu_ms for e in executors) * 1.1,
                    overhead_cpu_ms=50.0,
                    executors=tuple(sorted(executors, key=lambda e: e.task_start)),
                    traffic=tuple(sorted(traffic[worker], key=lambda t: (t.src, t.dst))),
                )
            )
    return out
