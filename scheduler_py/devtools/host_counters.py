"""Every emulated host's counters at once, for a benchmark's measured interval: on top of
``scheduler_py/devtools/emulated_hosts.py`` (the emulation's state file
``$CLUSTER_DIR/run/emulated-hosts.json``, a host's ``traffic()`` from the root end of its
veth and ``cpu()`` from its cgroup), one :class:`Snapshot` of all hosts and rack uplinks,
and the difference of two::

    hosts = load_if_present(cluster_dir)          # None: the cluster has no emulated hosts
    reader = CounterReader(hosts)
    before = reader.snapshot()
    ...
    delta = reader.snapshot().minus(before)       # bytes sent/received, CPU-s, throttling
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scheduler_py.devtools import emulated_hosts
from scheduler_py.devtools.emulated_hosts import EmulatedHosts


class EmulatedHostsError(RuntimeError):
    """A counter of an emulated host cannot be read; the message says which."""


def load_if_present(cluster_dir: Path) -> EmulatedHosts | None:
    """The cluster's emulated hosts, or ``None`` when it runs without them."""
    if not (cluster_dir / emulated_hosts.STATE_FILE).is_file():
        return None
    return emulated_hosts.load(cluster_dir)


@dataclass(frozen=True)
class HostSample:
    sent_bytes: int
    received_bytes: int
    cpu_seconds: float
    throttled_periods: int
    """CFS periods in which the host used up its CPU quota and was stopped"""


@dataclass(frozen=True)
class Snapshot:
    """All counters at ``at`` (monotonic seconds); as a difference of two snapshots
    (:meth:`minus`), ``at`` is the span in seconds."""

    at: float
    hosts: Mapping[str, HostSample]
    rack_uplink_sent: Mapping[str, int]
    """rack name -> bytes that left the rack through its uplink (rx of the root end)"""

    def minus(self, earlier: Snapshot) -> Snapshot:
        hosts = {}
        for name, now in self.hosts.items():
            if name in earlier.hosts:
                before = earlier.hosts[name]
                hosts[name] = HostSample(
                    now.sent_bytes - before.sent_bytes,
                    now.received_bytes - before.received_bytes,
                    now.cpu_seconds - before.cpu_seconds,
                    now.throttled_periods - before.throttled_periods,
                )
        uplinks = {
            rack: sent - earlier.rack_uplink_sent[rack]
            for rack, sent in self.rack_uplink_sent.items()
            if rack in earlier.rack_uplink_sent
        }
        return Snapshot(self.at - earlier.at, hosts, uplinks)

    @property
    def inter_host_bytes(self) -> int:
        """Bytes the hosts sent over their veths (to other hosts, plus the few to the root
        namespace's ZooKeeper/Nimbus: heartbeats)."""
        return sum(sample.sent_bytes for sample in self.hosts.values())

    @property
    def inter_rack_bytes(self) -> int:
        """Bytes that left a rack through its uplink (to the other rack or the root)."""
        return sum(self.rack_uplink_sent.values())

    def cpu_cores(self) -> dict[str, float]:
        """host name -> cores used on average (CPU-seconds / span); for a difference."""
        if self.at <= 0:
            return {}
        return {name: sample.cpu_seconds / self.at for name, sample in self.hosts.items()}


class CounterReader:
    """Reads the counters of ``hosts`` (sysfs under ``emulated_hosts.SYS_NET``, cgroups
    where the state file says)."""

    def __init__(self, hosts: EmulatedHosts) -> None:
        self.hosts = hosts

    def snapshot(self) -> Snapshot:
        at = time.monotonic()
        samples = {}
        for host in self.hosts.hosts:
            try:
                traffic, cpu = host.traffic(), host.cpu()
            except (OSError, KeyError, ValueError) as error:
                raise EmulatedHostsError(
                    f"cannot read the counters of emulated host {host.name} (veth "
                    f"{host.veth_root}, cgroup {host.cgroup}): {error}; is the emulated "
                    "cluster up (deploy/cluster-status.sh)?"
                ) from None
            samples[host.name] = HostSample(
                traffic.sent, traffic.received, cpu.usage_s, cpu.throttled
            )
        uplinks = {}
        for rack in self.hosts.racks:
            path = emulated_hosts.SYS_NET / rack.uplink_veth_root / "statistics" / "rx_bytes"
            try:
                uplinks[rack.name] = int(path.read_text())
            except (OSError, ValueError) as error:
                raise EmulatedHostsError(
                    f"cannot read {path} (uplink of {rack.name}): {error}"
                ) from None
        return Snapshot(at, samples, uplinks)
