"""A topology's own settings cannot relax what keeps the cluster safe: its capacity caps
(``scheduler.brain.node.cpu.cap``, ``scheduler.brain.balance.alpha``) only lower what a
supervisor offers it (scheduler_py/scheduling/view.py), its worker count is Storm's
``topology.workers`` as Nimbus reports it (not a conf entry), its round budget only shrinks
its share (scheduling/round.py), and its reconfiguration settings cannot go negative
(reconfig/trigger.py) — whatever the topology conf says."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.wire import wire
from tests.snapshots import answer, snapshot, supervisor, wordcount

CPU_PER_EXECUTOR = 10.0  # every wordcount component declares 10 % of a core


def _loads(plan) -> dict[str, float]:
    loads: dict[str, float] = defaultdict(float)
    for placement in plan.placements:
        loads[placement.supervisor_id] += CPU_PER_EXECUTOR
    return loads


@pytest.mark.parametrize(
    "conf",
    [
        {"scheduler.brain.node.cpu.cap": 100_000},
        {"scheduler.brain.balance.alpha": 1_000},
        {"scheduler.brain.budget.ms": 10**9},
        {"topology.workers": 50},
    ],
    ids=["cpu-cap", "balance-alpha", "budget", "workers-conf"],
)
def test_a_topology_conf_cannot_place_it_over_capacity_or_over_its_workers(conf):
    supervisors = [supervisor(f"s{i}", (6700, 6701, 6702), cpu=60.0) for i in (1, 2)]
    reply, _ = answer(snapshot(supervisors, [wordcount(conf=conf, workers=2)]), RoundConfig("td"))
    (plan,) = reply.plans
    if plan.decision == wire().Decision.PLACE:
        assert max(_loads(plan).values()) <= 60.0 + 1e-9, _loads(plan)
        slots = Counter((p.supervisor_id, p.port) for p in plan.placements)
        assert len(slots) <= 2, slots
    else:
        assert plan.decision == wire().Decision.LEAVE_TO_STORM


def test_a_cap_below_capacity_still_tightens():
    supervisors = [supervisor(f"s{i}", (6700, 6701), cpu=400.0) for i in (1, 2, 3)]
    conf = {"scheduler.brain.node.cpu.cap": 40}
    reply, _ = answer(snapshot(supervisors, [wordcount(conf=conf)]), RoundConfig("td"))
    (plan,) = reply.plans
    assert plan.decision == wire().Decision.PLACE
    assert max(_loads(plan).values()) <= 40.0 + 1e-9


@pytest.mark.parametrize(
    "key", ["min.gain", "max.restart.share", "cooldown.secs", "drain.timeout.secs"]
)
def test_reconfiguration_settings_cannot_go_negative(key):
    with pytest.raises(ValueError, match="topology conf"):
        TriggerConfig().for_topology({f"scheduler.reconfig.{key}": -1})
