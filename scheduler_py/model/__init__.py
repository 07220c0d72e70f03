"""The scheduling model: value types, the cost module, feasibility and JSON I/O."""

from scheduler_py.model.errors import (
    InfeasibleError,
    InvalidProblemError,
    SchedulingError,
    UnknownAlgorithmError,
)
from scheduler_py.model.types import (
    EPSILON,
    Component,
    Edge,
    Executor,
    Node,
    Placement,
    Problem,
    Topology,
    WorkerSlot,
    executor_id,
)

__all__ = [
    "EPSILON",
    "Component",
    "Edge",
    "Executor",
    "InfeasibleError",
    "InvalidProblemError",
    "Node",
    "Placement",
    "Problem",
    "SchedulingError",
    "Topology",
    "UnknownAlgorithmError",
    "WorkerSlot",
    "executor_id",
]
