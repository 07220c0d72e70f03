"""Recovery after a brain restart: finish the journal entries a previous brain process left
open (``scheduler_py/reconfig/history.py``, :meth:`History.unfinished`).

For each unfinished entry: activate the topology when Nimbus shows it INACTIVE or
REBALANCING, whatever the entry's last state, and record whether the plan was in effect
(*completed*) or not (*rolled back*). The controller journals ``draining`` before it asks
Nimbus to deactivate (``scheduler_py/reconfig/execution.py``), so a brain killed right after
that call has left such an entry; a journal written by an older brain may even stop at
``accepted`` with the topology already deactivated. The controller only reconfigures ACTIVE
topologies, so an unfinished entry's topology that is not ACTIVE was deactivated by it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from scheduler_py.reconfig.execution import Steps, resume
from scheduler_py.reconfig.history import History
from scheduler_py.scheduling.state import ClusterState

log = logging.getLogger(__name__)

IN_EFFECT_WAIT_SECS = 30.0


def recover(history: History, steps: Steps, latest: Callable[[], ClusterState | None]) -> None:
    """Finish every unfinished entry of ``history``; ``latest`` returns the brain's latest
    round snapshot (``None`` before the first round)."""
    for entry in history.unfinished():
        name = entry["topology"]
        state = entry.get("state")
        status = steps.nimbus.status(entry.get("topology_id") or name)
        if status is None:
            history.record(
                name,
                entry["id"],
                state="failed",
                reason=f"brain restarted during '{state}'; the topology no longer runs",
            )
            continue
        in_effect = state in ("applying", "resuming") and _plan_in_effect(entry, steps, latest)
        resumed: dict[str, Any] = {}
        if status in ("INACTIVE", "REBALANCING"):
            since = entry.get("deactivated_at") or entry.get("started") or steps.clock()
            resumed = resume(steps, name, float(since))
        outcome = "completed" if in_effect else "rolled_back"
        reason = (
            f"brain restarted during '{state}'; the plan was in effect, topology resumed"
            if in_effect
            else f"brain restarted during '{state}'; the plan was not applied, topology "
            "resumed with the placement Nimbus gave it"
        )
        history.record(name, entry["id"], state=outcome, reason=reason, **resumed)
        log.warning("reconfiguration %s of %s: %s", entry["id"], name, reason)


def _plan_in_effect(
    entry: Mapping[str, Any], steps: Steps, latest: Callable[[], ClusterState | None]
) -> bool:
    """Whether Nimbus runs the entry's plan, polled once a second for up to
    :data:`IN_EFFECT_WAIT_SECS`. A brain killed in 'applying' may have issued the
    ``rebalance`` already: Nimbus's next rounds then move the workers, and the topology must
    stay deactivated until they have (activated earlier, its old spouts emit into workers
    about to be killed and those tuples are lost; ``tests/cluster/test_reconfiguration.py``
    saw two). So a snapshot that does not show the plan yet is not taken as the answer."""
    planned = {tuple(p) for p in entry.get("storm_placement") or ()}
    if not planned:
        return False
    for _ in range(int(IN_EFFECT_WAIT_SECS)):
        snapshot = latest()
        topo = None
        if snapshot is not None:
            topo = next((t for t in snapshot.topologies if t.id == entry["topology_id"]), None)
        if topo is not None and topo.running() == planned:
            return True
        steps.sleep(1.0)
    return False
