"""The real brain (``BrainHandler`` with the default round configuration) that also writes
the hosts, racks and declared link capacities of every snapshot the shim sends to a JSON
file, so a cluster test can see what Nimbus told the brain. Run as a script:

    python -m tests.cluster.recording_brain --port 9627 --snapshots FILE
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler, make_brain_server
from tests.cluster.brain_key import cluster_shim_auth


class RecordingBrain(BrainHandler):
    def __init__(self, snapshots: Path) -> None:
        super().__init__(RoundConfig())
        self.snapshots = snapshots

    def schedule(self, snapshot: Any) -> Any:
        racks = {sup.host: sup.rack for sup in snapshot.supervisors}
        links = {
            sup.host: [sup.host_link_mbit, sup.rack_uplink_mbit] for sup in snapshot.supervisors
        }
        temporary = self.snapshots.with_suffix(".tmp")
        temporary.write_text(json.dumps({"round": snapshot.round, "racks": racks, "links": links}))
        temporary.replace(self.snapshots)
        return super().schedule(snapshot)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--snapshots", type=Path, required=True)
    args = parser.parse_args()
    brain = RecordingBrain(args.snapshots)
    make_brain_server(brain, "127.0.0.1", args.port, shim_auth=cluster_shim_auth()).serve()


if __name__ == "__main__":
    main()
