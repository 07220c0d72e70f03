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
from scheduler_py.nimbus.leader import NimbusLeaderNotFound, parse_addresses

__all__ = [
    "ExecutorRun",
    "NimbusCtl",
    "NimbusLeaderNotFound",
    "NimbusUnreachable",
    "SupervisorState",
    "TopologyState",
    "default_nimbus",
    "parse_addresses",
    "parse_hostport",
]
