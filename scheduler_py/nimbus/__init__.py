"""The Nimbus edge: a Thrift client for Storm's Nimbus (:mod:`scheduler_py.nimbus.client`)."""

from scheduler_py.nimbus.client import (
    ExecutorRun,
    NimbusCtl,
    NimbusUnreachable,
    SupervisorState,
    TopologyState,
    default_nimbus,
    parse_hostport,
)

__all__ = [
    "ExecutorRun",
    "NimbusCtl",
    "NimbusUnreachable",
    "SupervisorState",
    "TopologyState",
    "default_nimbus",
    "parse_hostport",
]
