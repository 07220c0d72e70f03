"""A deliberately wrong brain for the shim's validation tests: it speaks the real wire
contract but answers with plans Storm must never apply. Run as a script:

    python -m tests.cluster.faulty_brain --port 9627 --mode duplicate|dead-supervisor
"""

from __future__ import annotations

import argparse

from scheduler_py.service.server import make_brain_server
from scheduler_py.service.wire import wire
from tests.cluster.brain_key import cluster_shim_auth


class FaultyBrain:
    def __init__(self, mode: str) -> None:
        self.mode = mode

    def ping(self) -> str:
        return "faulty"

    def schedule(self, snapshot):
        w = wire()
        plans = []
        supervisor = snapshot.supervisors[0]
        port = supervisor.slots[0].port
        for topo in snapshot.topologies:
            if not topo.needs_scheduling:
                plans.append(w.TopologyPlan(topo.id, w.Decision.KEEP, [], "faulty: keep", "x"))
                continue
            target = "no-such-supervisor" if self.mode == "dead-supervisor" else supervisor.id
            placements = [w.ExecutorPlacement(ex, target, port) for ex in topo.executors]
            if self.mode == "duplicate":
                placements.append(w.ExecutorPlacement(topo.executors[0], target, port))
            plans.append(
                w.TopologyPlan(topo.id, w.Decision.PLACE, placements, f"faulty: {self.mode}", "x")
            )
        return w.ScheduleReply(plans, "faulty")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mode", choices=("duplicate", "dead-supervisor"), required=True)
    parser.add_argument("--cluster-dir", help="unused; marks the process as this cluster's")
    args = parser.parse_args()
    brain = FaultyBrain(args.mode)  # its garbage sealed as the real brain seals its answers
    make_brain_server(brain, args.host, args.port, shim_auth=cluster_shim_auth()).serve()


if __name__ == "__main__":
    main()
