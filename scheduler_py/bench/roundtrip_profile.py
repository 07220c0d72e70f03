"""The brain's side of one Nimbus round, in process: where a round's time goes.

``scheduler-py bench roundtrip`` times the whole round through the Java shim; this module times
and profiles the part the brain owns, without Maven, a JVM or a socket. It builds the
``ClusterSnapshot`` the shim sends for the same synthetic cluster as
``storm_plugin/src/test/java/io/schedulerpy/storm/RoundTripBench.java`` (500 supervisors with 4
slots, 400 % CPU and 16 GB each; word-count topologies ``words -shuffle-> split -fields->
count`` with p/10, 4p/10 and the rest of p executors, one task each, no ackers, the declared
10 % CPU and 128 MB per executor of Storm's defaults, the shim's 2 s timeout), encodes it with
the binary protocol, and per round decodes it, runs
:meth:`scheduler_py.service.server.BrainHandler.schedule` (``to_state`` → ``plan_round`` →
``to_reply``, the plan log included when asked) and encodes the reply — the Thrift handler's
path, minus the socket, with the collector paused as the server pauses it around a call (the
collection that follows, once the answer is out, is not timed).

``python -m scheduler_py.bench.roundtrip_profile [--sizes 1000x1,10000x50] [--rounds 5]
[--profile FILE] [--plan-log FILE]`` prints the median and the largest round per size, wall
clock and CPU time; ``--profile`` writes the cProfile statistics of the measured rounds of each
size to ``FILE`` with ``-SIZE`` before its suffix and prints the top functions by cumulative and
by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.utils import deserialize, serialize

from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler, collection_paused
from scheduler_py.service.wire import wire

SUPERVISORS = 500
PORTS = 4
SUPERVISOR_CPU = 400.0
SUPERVISOR_MEMORY_MB = 16384.0
CPU_PER_EXECUTOR = 10.0
"""Storm's ``topology.component.cpu.pcore.percent`` default"""
MEMORY_MB_PER_EXECUTOR = 128.0
"""Storm's ``topology.component.resources.onheap.memory.mb`` default (off-heap 0)"""
TIMEOUT_MS = 2000
"""the shim's default ``scheduler.brain.timeout.ms`` (BrainConfig.DEFAULT_TIMEOUT_MS)"""
SIZES = ("1000x1", "1000x50", "10000x1", "10000x50")


def wordcount_topology(index: int, executors: int, workers: int) -> Any:
    """RoundTripBench.wordCount: ``words`` (p/10) -shuffle-> ``split`` (4p/10) -fields->
    ``count`` (the rest), tasks numbered from 1 in sorted component order as Storm does."""
    w = wire()
    g = w.GroupingType
    spouts = max(1, executors // 10)
    splits = max(1, executors * 4 // 10)
    counts = max(1, executors - spouts - splits)
    declared = [  # sorted by id, as the shim lists them
        ("count", False, counts, [w.InputStream("split", "default", g.FIELDS, ["word"])]),
        ("split", False, splits, [w.InputStream("words", "default", g.SHUFFLE, None)]),
        ("words", True, spouts, []),
    ]
    components = []
    task_executors = []
    task = 1
    for cid, spout, parallelism, inputs in declared:
        components.append(
            w.Component(
                cid, spout, False, parallelism, CPU_PER_EXECUTOR, MEMORY_MB_PER_EXECUTOR, inputs
            )
        )
        for _ in range(parallelism):
            task_executors.append(w.Executor(task, task, cid))
            task += 1
    name = f"wc{index:02d}"
    conf = {
        "topology.workers": str(workers),
        "topology.name": f'"{name}"',
        "topology.acker.executors": "0",
        "topology.message.timeout.secs": "30",
    }
    return w.Topology(
        id=f"{name}-1-0",
        name=name,
        num_workers=workers,
        components=components,
        executors=task_executors,
        current=[],
        needs_scheduling=True,
        conf=conf,
    )


def cluster_snapshot(executors: int, topologies: int, round_: int = 1) -> Any:
    """RoundTripBench's cluster for ``executors`` split evenly over ``topologies``."""
    w = wire()
    supervisors = [
        w.Supervisor(
            id=f"sup-{i}",
            host=f"host-{i}",
            rack=None,
            slots=[w.Slot(port=6700 + p) for p in range(PORTS)],
            total_cpu=SUPERVISOR_CPU,
            total_memory_mb=SUPERVISOR_MEMORY_MB,
            available_cpu=SUPERVISOR_CPU,
            available_memory_mb=SUPERVISOR_MEMORY_MB,
        )
        for i in range(SUPERVISORS)
    ]
    workers = max(1, SUPERVISORS * PORTS // topologies)
    each = executors // topologies
    return w.ClusterSnapshot(
        round=round_,
        timestamp_ms=0,
        supervisors=supervisors,
        topologies=[wordcount_topology(i, each, workers) for i in range(topologies)],
        storm_version="2.6.0",
        timeout_ms=TIMEOUT_MS,
    )


def one_round(handler: BrainHandler, request: bytes) -> tuple[float, float, Any]:
    """Seconds (wall clock, and CPU of the process) for decode → ``handler.schedule`` →
    encode, and the reply. On a loaded machine the CPU seconds are the steadier measure."""
    w = wire()
    factory = TBinaryProtocolFactory()
    with collection_paused():  # as BrainServer.handle does around a call
        started, cpu = time.perf_counter(), time.process_time()
        snapshot = deserialize(w.ClusterSnapshot(), request, factory)
        reply = handler.schedule(snapshot)
        serialize(reply, factory)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return seconds, cpu, reply


class ThreadProfiles:
    """cProfile of the calling thread and of every thread started while it is on (the round
    plans each topology in a thread, ``scheduler_py/scheduling/planning.py``)."""

    def __init__(self) -> None:
        self.main = cProfile.Profile()
        self.threads: list[cProfile.Profile] = []

    def _hook(self, frame: Any, event: str, arg: Any) -> None:
        profile = cProfile.Profile()
        self.threads.append(profile)
        profile.enable()

    def enable(self) -> None:
        threading.setprofile(self._hook)
        self.main.enable()

    def disable(self) -> None:
        self.main.disable()
        threading.setprofile(None)  # type: ignore[arg-type]

    def stats(self) -> pstats.Stats:
        stats = pstats.Stats(self.main, stream=sys.stdout)
        for profile in self.threads:
            stats.add(profile)
        return stats


def measure(
    size: str, rounds: int, profiler: ThreadProfiles | None, plan_log: Path | None
) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of each measured round of ``size`` (``EXECUTORSxTOPOLOGIES``) after one
    warm-up round; each round gets a fresh handler, so nothing is KEPT from the last one."""
    executors, topologies = (int(part) for part in size.split("x"))
    request = serialize(cluster_snapshot(executors, topologies), TBinaryProtocolFactory())
    one_round(BrainHandler(RoundConfig(), plan_log), request)
    times = []
    for _ in range(rounds):
        handler = BrainHandler(RoundConfig(), plan_log)
        if profiler is not None:
            profiler.enable()
        seconds, cpu, reply = one_round(handler, request)
        if profiler is not None:
            profiler.disable()
        handler.close()  # the plan log's writing, after the reply as in serve: not timed
        times.append((seconds, cpu))
        others = [p.reason for p in reply.plans if p.decision != wire().Decision.PLACE]
        if others:
            print(f"  {size}: {len(others)} topology(ies) not placed: {others[0]}")
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(SIZES), help="EXECUTORSxTOPOLOGIES,...")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds per size")
    parser.add_argument("--profile", type=Path, help="write cProfile statistics here")
    parser.add_argument("--top", type=int, default=25, help="functions to print per ordering")
    parser.add_argument("--plan-log", type=Path, help="append the plan log here, as serve does")
    args = parser.parse_args(argv)
    for size in (s.strip() for s in args.sizes.split(",") if s.strip()):
        profiler = ThreadProfiles() if args.profile else None
        times = measure(size, args.rounds, profiler, args.plan_log)
        wall, cpu = [t[0] * 1000 for t in times], [t[1] * 1000 for t in times]
        print(
            f"{size}: wall median {statistics.median(wall):.1f} ms, max {max(wall):.1f} ms; "
            f"CPU min {min(cpu):.1f} ms, median {statistics.median(cpu):.1f} ms, "
            f"max {max(cpu):.1f} ms "
            f"over {len(times)} rounds"
        )
        if profiler is not None:
            path = args.profile.with_name(f"{args.profile.stem}-{size}{args.profile.suffix}")
            stats = profiler.stats()
            stats.dump_stats(str(path))
            stats.sort_stats("cumulative").print_stats(args.top)
            stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
