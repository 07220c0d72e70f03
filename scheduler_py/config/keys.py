"""Every configuration key the brain, the shim and the worker monitor read: name, default,
meaning, and who reads it. The README's configuration tables are checked against this list
(``tests/test_config_keys.py``).

Use the constants (``keys.ALGORITHM.name``) instead of spelling a key again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Key:
    name: str
    default: Any
    meaning: str
    scope: str
    """``daemon`` (Nimbus's storm.yaml, read by the shim), ``topology`` (a topology's conf,
    read by the brain), ``monitor`` (worker monitor, any storm.yaml or topology conf) or
    ``reconfig`` (``scheduler.reconfig.*`` per topology, also ``serve --reconfig``)"""


# --- topology keys the brain reads (scheduling round) ---------------------------------------
ALGORITHM = Key(
    "scheduler.brain.algorithm",
    None,
    "a name from `scheduler-py algorithms`; unset: the service's `--algorithm`",
    "topology",
)
PARAMS = Key(
    "scheduler.brain.params",
    {},
    'JSON object of the algorithm\'s parameters, e.g. `{"key": "imc_group"}`',
    "topology",
)
NODE_CPU_CAP = Key(
    "scheduler.brain.node.cpu.cap",
    None,
    "the most CPU (percent of a core) the topology may use on one supervisor (utilisation "
    "target μ)",
    "topology",
)
BALANCE_ALPHA = Key(
    "scheduler.brain.balance.alpha",
    None,
    "paper 000 §2.2 load-balancing capacity mode: each supervisor offers at most α × "
    "(topology CPU) / (usable supervisors)",
    "topology",
)
METRICS_MAX_AGE = Key(
    "scheduler.brain.metrics.max.age.secs",
    180.0,
    "an aggregate older than this is ignored and the brain plans with declared costs",
    "topology",
)
BUDGET_MS = Key(
    "scheduler.brain.budget.ms",
    None,
    "the most time the topology's algorithm may take in a round (default: an equal share of "
    "the round's budget); past it the best plan so far, or the fallback algorithm, is used",
    "topology",
)

# --- daemon keys the shim reads (Nimbus's storm.yaml) ---------------------------------------
BRAIN_TIMEOUT_MS = Key(
    "scheduler.brain.timeout.ms",
    2000,
    "connect + reply timeout per round; the brain plans within it (its round budget is this "
    "minus a margin); past it the round falls back to DefaultScheduler",
    "daemon",
)
