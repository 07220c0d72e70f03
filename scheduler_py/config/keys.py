"""Every configuration key the shim, the brain and the worker monitor read: its name, default
and meaning, and where it is set. The tables of docs/configuration.md are rendered from this
list (:func:`markdown_table`; ``tests/test_config_keys.py`` fails when they differ, and when
a ``scheduler.*`` key appears in the Python or Java sources without being listed here).

Use the constants (``keys.ALGORITHM.name``) instead of spelling a key again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCOPES = {
    "daemon": "Daemon (`storm.yaml` of Nimbus; read by the shim)",
    "supervisor": "Supervisor (under `supervisor.scheduler.meta` in each supervisor's "
    "`storm.yaml`, values quoted; Storm passes them to the shim, which sends them to the brain)",
    "topology": "Topology (`-c`/`-o` at submit, or the topology's conf; read by the brain)",
    "monitor": "Worker monitor (any `storm.yaml`, or per topology; `deploy/monitor.yaml` has "
    "them all)",
    "reconfig": "Reconfiguration (`scheduler-py serve --reconfig KEY=VALUE` for every topology, "
    "`scheduler.reconfig.KEY` in a topology's conf for one)",
}
UNSET = None
"""Default of a key that is absent unless set (the table says how absence is read)."""


@dataclass(frozen=True)
class Key:
    name: str
    default: Any
    meaning: str
    scope: str
    """one of :data:`SCOPES`"""
    shown_default: str = ""
    """how docs/configuration.md shows the default when it is not just the value"""

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"{self.name}: scope must be one of {sorted(SCOPES)}")

    @property
    def default_text(self) -> str:
        if self.shown_default:
            return self.shown_default
        if self.default is None:
            return "unset"
        if isinstance(self.default, bool):
            return f"`{str(self.default).lower()}`"
        if isinstance(self.default, str) and not self.default:
            return "empty"
        return f"`{self.default}`"


# --- daemon: Nimbus's storm.yaml (storm_plugin/.../BrainConfig.java) --------------------------
STORM_SCHEDULER = Key(
    "storm.scheduler",
    None,
    "`io.schedulerpy.storm.BrainScheduler` to use the brain",
    "daemon",
    shown_default="—",
)
BRAIN_HOST = Key(
    "scheduler.brain.host", "127.0.0.1", "where `scheduler-py serve` listens", "daemon"
)
BRAIN_PORT = Key("scheduler.brain.port", 9627, "its port", "daemon")
BRAIN_TIMEOUT_MS = Key(
    "scheduler.brain.timeout.ms",
    2000,
    "connect + reply timeout per round, sent to the brain, which plans within 75 % of it; "
    "past it the round falls back to `DefaultScheduler`",
    "daemon",
)
BRAIN_ENABLED = Key(
    "scheduler.brain.enabled",
    True,
    "`false` turns the shim into plain `DefaultScheduler`",
    "daemon",
)
BRAIN_KEY_FILE = Key(
    "scheduler.brain.key.file",
    None,
    "file with the key the shim seals every round with (one line, mode 0600; the brain's "
    "`serve --shim-key-file`); unset: rounds go unsealed and the brain refuses them unless "
    "started with `--allow-unauthenticated-rounds`",
    "daemon",
)
TOPOGRAPHY_RACKS = Key(
    "scheduler.topography.racks",
    None,
    "host → rack map read by `io.schedulerpy.storm.topography.StaticRackMapping` when it is "
    "`storm.network.topography.plugin` (the emulated hosts set both); unlisted hosts: "
    "Storm's default rack",
    "daemon",
    shown_default="—",
)

# --- supervisor: supervisor.scheduler.meta (storm_plugin/.../SnapshotBuilder.java) -----------
HOST_LINK_MBIT = Key(
    "scheduler.host.link.mbit",
    None,
    "Mbit/s of this supervisor's host network link, each way, as a quoted number "
    '(`"1000"`); the throughput model\'s host link capacity '
    "(docs/algorithms/throughput-model.md); unset: the algorithm's `host_mbit` parameter",
    "supervisor",
)
RACK_UPLINK_MBIT = Key(
    "scheduler.rack.uplink.mbit",
    None,
    "Mbit/s of the uplink of this supervisor's rack, each way, quoted; the throughput model's "
    "rack link capacity (the smallest its supervisors declare); unset: the algorithm's "
    "`rack_link` share of a host link",
    "supervisor",
)

# --- topology: read by the brain's scheduling round ----------------------------------------
DEFAULT_ALGORITHM = "throughput"
"""the service's algorithm for topologies without :data:`ALGORITHM` (``serve --algorithm``):
the plan with the highest predicted throughput under Storm's routing, for any tuple size
(``docs/algorithms/throughput-model.md``). Told nothing per topology, on the emulated
network's network-bound topologies with load-aware messaging on, it ran at 1.99×, 3.80× and
1.44× RAS's throughput on Linear, Diamond and Star, and at 2.63×, 1.59× and 1.00× ``td``'s,
the default before it, whose plan follows the random supervisor ids
(``docs/results/emulated-network/throughput-default/``). ``td``
remains the round's fallback when a plan does not come back in its time
(``scheduler_py/scheduling/round.py``, ``RoundConfig.fallback_algorithm``)."""
ALGORITHM = Key(
    "scheduler.brain.algorithm",
    None,
    "a name from `scheduler-py algorithms`",
    "topology",
    shown_default=f"the service's `--algorithm` (`{DEFAULT_ALGORITHM}`)",
)
PARAMS = Key(
    "scheduler.brain.params",
    {},
    'JSON object of the algorithm\'s parameters, e.g. `{"key": "imc_group"}`',
    "topology",
)
BUDGET_MS = Key(
    "scheduler.brain.budget.ms",
    None,
    "the most time (ms) the topology's algorithm may plan in a round; unset: an equal share of "
    "what is left of the round's budget. Past it: the best plan so far, or `td`'s",
    "topology",
)
METRICS_MAX_AGE = Key(
    "scheduler.brain.metrics.max.age.secs",
    180,
    "an aggregate older than this is ignored and the brain plans with declared costs",
    "topology",
)
NODE_CPU_CAP = Key(
    "scheduler.brain.node.cpu.cap",
    None,
    "the most CPU (percent of a core) the topology may use on one supervisor: the utilisation "
    "target μ that makes *overload* and *fits after the load dropped* meaningful",
    "topology",
)
BALANCE_ALPHA = Key(
    "scheduler.brain.balance.alpha",
    None,
    "paper 000 §2.2 *load-balancing* capacity mode: each supervisor offers at most α × "
    "(topology CPU) / (usable supervisors), so the topology spreads instead of being "
    "consolidated",
    "topology",
)
TOPOLOGY_WORKERS = Key(
    "topology.workers",
    None,
    "the most workers a plan may use (the shim rejects more)",
    "topology",
    shown_default="Storm's",
)
COMPONENT_CPU = Key(
    "topology.component.cpu.pcore.percent",
    None,
    "declared CPU per executor (percent of a core) the algorithms place against",
    "topology",
    shown_default="Storm's (10)",
)
COMPONENT_MEMORY = Key(
    "topology.component.resources.onheap.memory.mb",
    None,
    "declared on-heap memory per executor the algorithms place against",
    "topology",
    shown_default="Storm's (128)",
)
MESSAGE_TIMEOUT = Key(
    "topology.message.timeout.secs",
    30,
    "without live counters (monitor off), a reconfiguration's drain waits this long",
    "topology",
    shown_default="Storm's (30)",
)
DISABLE_LOADAWARE = Key(
    "topology.disable.loadaware.messaging",
    False,
    "`throughput` and `locality` plan for Storm's locality-aware shuffle unless this is "
    "true (then for a uniform shuffle; `locality` makes the `links` plan: the busiest link "
    "lowest)",
    "topology",
    shown_default="Storm's (false)",
)
MAX_SPOUT_PENDING = Key(
    "topology.max.spout.pending",
    None,
    "`throughput` bounds each spout's tuples in flight by it when it predicts a plan's rate",
    "topology",
    shown_default="Storm's (unbounded)",
)

# --- worker monitor (storm_plugin/.../monitor/MonitorConfig.java) ---------------------------
MONITOR_WINDOW = Key("scheduler.monitor.window.secs", 10, "length of a window record", "monitor")
MONITOR_SAMPLE_RATE = Key(
    "scheduler.monitor.sample.rate",
    0.01,
    "share of emitted tuples serialised with Kryo to estimate bytes",
    "monitor",
)
MONITOR_ZK_ROOT = Key(
    "scheduler.monitor.zk.root",
    "/scheduler-py",
    "ZooKeeper root of every monitoring znode",
    "monitor",
)
MONITOR_RETENTION = Key(
    "scheduler.monitor.retention.windows",
    30,
    "window znodes a worker keeps in ZooKeeper",
    "monitor",
)
MONITOR_LOG_ENABLED = Key(
    "scheduler.monitor.log.enabled",
    True,
    "also append window records to a rotated local log",
    "monitor",
)
MONITOR_LIVE_SECS = Key(
    "scheduler.monitor.live.secs",
    1.0,
    "period of the live counters the drain-out observes (0: off)",
    "monitor",
)
MONITOR_ZK_ENABLED = Key(
    "scheduler.monitor.zk.enabled",
    True,
    "`false`: local log only, nothing published to ZooKeeper",
    "monitor",
)
MONITOR_ZK_DIGEST_FILE = Key(
    "scheduler.monitor.zk.digest.file",
    None,
    "file (mode 0600) holding `user:password`: monitoring znodes are created writable only "
    "with this digest credential, and every client authenticates with it (Python commands: "
    "`$SCHEDULER_PY_ZK_DIGEST_FILE`; scheduler_py/monitoring/zk_acl.py)",
    "monitor",
    shown_default="unset (open ACL)",
)
MONITOR_ZK_WORLD_READ = Key(
    "scheduler.monitor.zk.world.read",
    True,
    "with a digest file: anyone may still read the monitoring znodes (`false`: only the "
    "credential; Python commands: `$SCHEDULER_PY_ZK_WORLD_READ`)",
    "monitor",
)
MONITOR_SHELL_LOG_DELEGATE = Key(
    "scheduler.monitor.multilang.log.handler",
    None,
    "the `ShellLogHandler` class the monitor's multilang log handler delegates log lines to",
    "monitor",
    shown_default="Storm's `DefaultShellLogHandler`",
)
MONITOR_MODE = Key(
    "scheduler.monitor.mode",
    "counts",
    "`counts`: Storm's own task counters, no per-tuple cost; `exact`: also the per-tuple "
    "`TrafficHook` (exact pair traffic, costs throughput)",
    "monitor",
)

# --- reconfiguration (scheduler_py/reconfig/trigger.py TriggerConfig) -----------------------
RECONFIG_PREFIX = "scheduler.reconfig."


def _reconfig(name: str, default: Any, meaning: str) -> Key:
    return Key(RECONFIG_PREFIX + name, default, meaning, "reconfig")


RECONFIG = (
    _reconfig("enabled", True, "automatic trigger on (`replan` works either way)"),
    _reconfig(
        "algorithm",
        "",
        "algorithm of re-plans; empty: `throughput` for a topology placed by `throughput` (the "
        "service default), `tdls` for one placed by another algorithm (place with `rstorm`, "
        "re-plan with `tdls`); a `throughput` re-plan is judged on the predicted rate, the "
        "others on inter-worker traffic",
    ),
    _reconfig("change.threshold", 0.25, "θ: relative L1 change of the measured costs that counts"),
    _reconfig("change.windows", 2, "m: consecutive aggregates above θ"),
    _reconfig(
        "min.gain",
        0.02,
        "δ: required cut of inter-worker traffic, as a share of all traffic",
    ),
    _reconfig(
        "min.rate.gain",
        0.10,
        "required rise of the predicted rate for a `throughput` re-plan, relative (smaller "
        "predicted gains measured as none or as losses on the emulated cluster)",
    ),
    _reconfig("cooldown.secs", 300.0, "no automatic reconfiguration sooner after one"),
    _reconfig("decline.backoff.secs", 120.0, "no new evaluation sooner after a declined one"),
    _reconfig(
        "warmup.secs",
        120.0,
        "watch-only time after start and after each reconfiguration; a reconfiguration's "
        "measured gain is read on a window that starts after it",
    ),
    _reconfig(
        "drain.timeout.secs", 60.0, "give up draining: resume unchanged, history says rolled back"
    ),
    _reconfig("drain.min.secs", 0.0, "drain at least this long"),
    _reconfig("drain.quiet.polls", 2, "drained = this many quiet polls in a row"),
    _reconfig(
        "drain.poll.secs",
        0.05,
        "time between two polls of the live counters (polls that see no new publication "
        "are skipped)",
    ),
    _reconfig(
        "apply.timeout.secs",
        120.0,
        "wait this long for Nimbus to apply the plan and the workers to come up",
    ),
    _reconfig(
        "max.restart.share",
        0.5,
        "a plan restarting more of the topology's workers than this share is applied in stages",
    ),
    _reconfig(
        "replan.on.measured",
        True,
        "re-plan once when a topology placed on declared costs has its first steady aggregate",
    ),
    _reconfig(
        "regret.backoff.secs",
        3600.0,
        "no automatic reconfiguration this long after one whose measured gain was negative",
    ),
)

ALL: tuple[Key, ...] = (
    tuple(value for value in list(globals().values()) if isinstance(value, Key)) + RECONFIG
)


def by_name() -> dict[str, Key]:
    return {key.name: key for key in ALL}


def markdown_table(scope: str) -> str:
    """The docs/configuration.md table of one scope."""
    rows = ["| key | default | meaning |", "| --- | --- | --- |"]
    for key in ALL:
        if key.scope == scope:
            rows.append(f"| `{key.name}` | {key.default_text} | {key.meaning} |")
    return "\n".join(rows)
