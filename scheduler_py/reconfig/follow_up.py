"""After a reconfiguration: record its measured gain and decide what it means for the
topology (``scheduler_py/reconfig/measured_gain.py`` computes; this module records and
acts): back off after a negative gain, fire the next stage of a staged plan after a
non-negative one (``scheduler_py/reconfig/staging.py``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from scheduler_py.reconfig import measured_gain
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.trigger import Trigger, TriggerConfig, Watch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FollowUp:
    """A completed reconfiguration whose measured gain is still to be recorded, from the
    first aggregate whose window starts at ``measure_from_ms`` or later."""

    entry_id: str
    name: str
    measure_from_ms: int


def measure_from_ms(resumed_at: float, config: TriggerConfig) -> int:
    """When a reconfiguration's measured gain may start to be measured: ``warmup_secs``
    after the topology resumed, the warm-up after which the trigger takes its change
    reference too. The restarted workers' JIT compiler is still at work before (on the
    emulated cluster the CPU-bound topologies ran at 0.75–0.83× their later rate 30–95 s
    after their first acks; ``docs/results/emulated-network/throughput-default/README.md``),
    and a window measured then made every re-plan there look like a loss."""
    return int((resumed_at + config.warmup_secs) * 1000)


def follow_up(
    history: History,
    name: str,
    entry_id: str,
    aggregate: Mapping[str, Any] | None,
    watch: Watch,
    config: TriggerConfig,
    now: float,
) -> tuple[Watch, Trigger | None]:
    """Record the measured gain of reconfiguration ``entry_id`` from ``aggregate`` (measured
    wholly after it resumed); return the watch (quiet for ``regret_backoff_secs`` after a
    negative gain) and the ``staged`` trigger of the plan's next stage, if any."""
    entry = next((e for e in history.entries(name) if e["id"] == entry_id), {})
    after = measured_gain.measure(aggregate)
    if after is None:
        return watch, None
    recorded = entry.get("measured_before")
    before = measured_gain.Measured(**recorded) if isinstance(recorded, dict) else None
    measured = measured_gain.compare(before, after, entry.get("report") or {})
    history.record(name, entry_id, measured=measured)
    line = measured_gain.summary(measured)
    if measured["negative"]:
        log.warning(
            "reconfiguration %s of %s: %s; no automatic reconfiguration of it for %gs",
            entry_id,
            name,
            line,
            config.regret_backoff_secs,
        )
        quiet = max(watch.quiet_until, now + config.regret_backoff_secs)
        return replace(watch, quiet_until=quiet), None
    log.info("reconfiguration %s of %s: %s", entry_id, name, line)
    stages = int(entry.get("stages") or 1)
    if stages <= 1:
        return watch, None
    return watch, Trigger(
        "staged",
        f"next stage of a plan staged in {stages} (previous stage measured: {line})",
        {"stages_left": stages - 1},
    )
