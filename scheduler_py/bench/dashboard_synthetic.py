"""The synthetic cluster the ``dashboard_api`` benchmark serves: one word-count-like topology of
``executors`` single-task executors on ``hosts`` supervisors in racks, as the real brain reports
it, with a plan log, a reconfiguration history and a measured aggregate of realistic size.

How each part is made real rather than hand-written:

* the status: two rounds of the real :class:`scheduler_py.service.server.BrainHandler` on a
  Thrift snapshot (the shape the shim sends, ``scheduler_py/service/scheduler.thrift``) — the
  first places the topology, the second keeps it — then ``status()`` parsed once;
* the plan log: the first round's real plan-log line (``serve --plan-log``, full placement
  included), repeated ``plan_log`` times with increasing round numbers and times;
* the history: ``history`` reconfigurations recorded through the real
  :class:`scheduler_py.reconfig.history.History` (in memory), states as the controller writes
  them (``draining → applying → resuming → completed``, some ``declined``);
* the aggregate: every executor with its CPU and every communicating executor pair of the
  topology's edges (shuffle and fields groupings talk to every downstream executor; every
  executor acks to every acker), then cut to the ZooKeeper budget by the monitoring job's own
  :func:`scheduler_py.monitoring.documents.fit_znode`, as the real aggregate is.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_py.config import keys
from scheduler_py.monitoring.documents import fit_znode
from scheduler_py.reconfig.history import History
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.wire import wire

TOPOLOGY_ID = "bench-1-1700000000"
TOPOLOGY_NAME = "bench"
SLOTS_PER_HOST = 4
EXECUTORS_PER_WORKER = 5
# share of the executors per component; the sink takes the rest (component ids sorted, as
# Storm numbers tasks)
SHARES = (("__acker", 0.1), ("count", 0.4), ("sink", 0.0), ("split", 0.3), ("spout", 0.1))
UPSTREAM = {
    "split": ("spout", "SHUFFLE"),
    "count": ("split", "FIELDS"),
    "sink": ("count", "SHUFFLE"),
}


@dataclass(frozen=True)
class SyntheticCluster:
    status: Mapping[str, Any]
    """the brain's ``status()`` document"""
    plan_log: Path
    """a JSON-lines plan log file (deleted with the cluster's scratch directory)"""
    history: Sequence[Mapping[str, Any]]
    """the topology's reconfiguration history (``History.entries``)"""
    aggregate: Mapping[str, Any]
    """the topology's aggregate document (``docs/monitoring-format.md`` §4)"""
    pairs_total: int
    """communicating executor pairs before the ZooKeeper budget cut"""
    scratch: tempfile.TemporaryDirectory


def sizes(executors: int) -> dict[str, int]:
    """Executors per component; every component at least one."""
    result = {name: max(1, round(executors * share)) for name, share in SHARES if share}
    result["sink"] = max(1, executors - sum(result.values()))
    return {name: result[name] for name, _ in SHARES}


def _components(counts: Mapping[str, int]) -> list[Any]:
    w = wire()
    grouping = w.GroupingType
    components = []
    for name, parallelism in counts.items():
        if name == "__acker":
            inputs = [
                w.InputStream(c, "__ack_ack", grouping.FIELDS, ["id"])
                for c in ("count", "sink", "split")
            ] + [w.InputStream("spout", "__ack_init", grouping.FIELDS, ["id"])]
        elif name in UPSTREAM:
            source, kind = UPSTREAM[name]
            fields = ["word"] if kind == "FIELDS" else None
            inputs = [w.InputStream(source, "default", getattr(grouping, kind), fields)]
        else:
            inputs = []
        components.append(
            w.Component(name, name == "spout", name == "__acker", parallelism, 10.0, 128.0, inputs)
        )
    return components


def _snapshot(
    executors: int, hosts: int, racks: int, round_: int, current: Sequence[Any]
) -> tuple[Any, dict[str, list[int]]]:
    """A Thrift snapshot and the task ids of each component."""
    w = wire()
    counts = sizes(executors)
    tasks: dict[str, list[int]] = {}
    task_list = []
    task = 1
    for name, parallelism in counts.items():
        tasks[name] = list(range(task, task + parallelism))
        task_list += [w.Executor(t, t, name) for t in tasks[name]]
        task += parallelism
    used = {(p.supervisor_id, p.port) for p in current}
    per_rack = max(1, -(-hosts // racks))
    supervisors = [
        w.Supervisor(
            id=f"sup-{h:03d}",
            host=f"host-{h:03d}",
            rack=f"rack-{h // per_rack}",
            slots=[
                w.Slot(
                    port=6700 + s,
                    topology_id=TOPOLOGY_ID if (f"sup-{h:03d}", 6700 + s) in used else None,
                )
                for s in range(SLOTS_PER_HOST)
            ],
            total_cpu=400.0,
            total_memory_mb=16384.0,
            available_cpu=400.0,
            available_memory_mb=16384.0,
        )
        for h in range(hosts)
    ]
    workers = max(1, min(hosts * SLOTS_PER_HOST, executors // EXECUTORS_PER_WORKER))
    topology = w.Topology(
        id=TOPOLOGY_ID,
        name=TOPOLOGY_NAME,
        num_workers=workers,
        components=_components(counts),
        executors=task_list,
        current=list(current),
        needs_scheduling=not current,
        conf={keys.ALGORITHM.name: json.dumps("td")},
    )
    snapshot = w.ClusterSnapshot(
        round=round_,
        timestamp_ms=int(time.time() * 1000),
        supervisors=supervisors,
        topologies=[topology],
        storm_version="2.8.0",
    )
    return snapshot, tasks


def _placements(reply: Any) -> list[Any]:
    (plan,) = reply.plans
    if not plan.placements:
        raise RuntimeError(f"the brain did not place the synthetic topology: {plan.reason}")
    return list(plan.placements)


def build(
    executors: int, hosts: int, racks: int, plan_log: int, history: int, seed: int
) -> SyntheticCluster:
    """The cluster of the module docstring (deterministic for a seed, up to times)."""
    rng = random.Random(seed)
    scratch = tempfile.TemporaryDirectory(prefix="dashboard-bench-")
    log_path = Path(scratch.name) / "plans.jsonl"
    handler = BrainHandler(RoundConfig("td"), plan_log=log_path)
    first, tasks = _snapshot(executors, hosts, racks, 1, [])
    placements = _placements(handler.schedule(first))
    second, _ = _snapshot(executors, hosts, racks, 2, placements)
    handler.schedule(second)
    handler.close()  # the plan log is written
    status = json.loads(handler.status())
    _grow_plan_log(log_path, plan_log)
    where = {p.executor.task_start: (p.supervisor_id, p.port) for p in placements}
    document = _aggregate(tasks, where, rng)
    pairs_total = len(document["pairs"])
    fit_znode(document)
    return SyntheticCluster(
        status, log_path, _history(history, rng), document, pairs_total, scratch
    )


def _grow_plan_log(path: Path, lines: int) -> None:
    """The real first line, repeated ``lines`` times as later rounds (a re-placement each)."""
    entry = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    start = entry["timestamp_ms"] - lines * 60_000
    with path.open("w", encoding="utf-8") as out:
        for k in range(lines):
            entry |= {"round": 10 * k + 1, "timestamp_ms": start + 60_000 * k}
            out.write(json.dumps(entry, sort_keys=True) + "\n")


def _history(count: int, rng: random.Random) -> list[dict[str, Any]]:
    journal = History(None)
    started = time.time() - count * 600
    for k in range(count):
        entry = f"r-{k:05d}"
        trigger = {"kind": rng.choice(["traffic", "cpu", "measured"]), "score": rng.random()}
        if k % 4 == 3:
            journal.record(TOPOLOGY_NAME, entry, state="declined", trigger=trigger,
                           reason="the new plan keeps no more traffic")  # fmt: skip
            continue
        report = {"workers_restarted": rng.randint(1, 20), "predicted_gain": rng.random()}
        for state in ("draining", "applying", "resuming"):
            journal.record(TOPOLOGY_NAME, entry, state=state, trigger=trigger, report=report)
        journal.record(TOPOLOGY_NAME, entry, state="completed", pause_secs=rng.uniform(4, 15),
                       measured={"gain": rng.random()})  # fmt: skip
    entries = journal.entries(TOPOLOGY_NAME)
    for k, item in enumerate(entries):  # spread the times as if recorded over hours
        item["at"] = item["started"] = started + 600 * k
    return entries


def _aggregate(
    tasks: Mapping[str, list[int]], where: Mapping[int, tuple[str, int]], rng: random.Random
) -> dict[str, Any]:
    now_ms = int(time.time() * 1000)
    component_of = {t: name for name, ts in tasks.items() for t in ts}
    executors = [
        {
            "task_start": t,
            "task_end": t,
            "component": component_of[t],
            "cpu_percent": round(rng.uniform(0.5, 30.0), 3),
            "supervisor_id": where[t][0],
            "port": where[t][1],
        }
        for t in sorted(component_of)
    ]
    links = [(tasks[source], tasks[target]) for target, (source, _) in UPSTREAM.items()]
    links += [(tasks[name], tasks["__acker"]) for name in ("spout", "split", "count", "sink")]
    pairs = [
        {
            "src": [s, s],
            "dst": [d, d],
            # Zipf-like skew: a few hot pairs, a long tail
            "tuples_per_s": round(1000.0 / (1 + rng.paretovariate(1.2)), 3),
            "bytes_per_s": 0.0,
        }
        for sources, targets in links
        for s in sources
        for d in targets
    ]
    for pair in pairs:
        pair["bytes_per_s"] = round(pair["tuples_per_s"] * 80, 3)
    return {
        "v": 1,
        "topology_id": TOPOLOGY_ID,
        "computed_at_ms": now_ms - 5_000,
        "window_start_ms": now_ms - 65_000,
        "window_end_ms": now_ms - 5_000,
        "windows": 6,
        "executors": executors,
        "pairs": pairs,
    }
