"""The emulated hosts of a local cluster (``EMU_HOSTS=N deploy/cluster-up.sh``, issue 13
item 1) as the benchmarks see them: :func:`load` reads ``$CLUSTER_DIR/run/emulated-hosts.json``
and :class:`CounterReader` samples each host's traffic and CPU counters::

    hosts = load(cluster_dir / "run" / "emulated-hosts.json")
    reader = CounterReader(hosts)
    before = reader.snapshot()
    ...
    after = reader.snapshot()
    delta = after.minus(before)   # bytes each host sent/received, CPU-seconds, inter-rack bytes

The file (written by ``deploy/cluster-up.sh``) has this shape::

    {"core_bridge": str, "root_address": "198.18.0.1", "host_mbit": float,
     "interrack_mbit": float, "cgroup_version": 1 | 2,
     "hosts": [{"name": "h1", "supervisor": 1, "netns": str, "address": str,
                "rack": "/rack-1", "veth_root": str, "cgroup": str, "cpu_cores": float}],
     "racks": [{"name": "/rack-1", "bridge": str, "uplink_veth_root": str}]}

Counters: ``/sys/class/net/<veth_root>/statistics/{rx,tx}_bytes`` of the root-namespace end
of a host's veth pair (``rx`` there = bytes the host *sent*, ``tx`` = bytes delivered to it);
a host's CPU time is ``cpuacct.usage`` (v1, nanoseconds: in its cgroup directory on a
combined ``cpu,cpuacct`` mount, in the ``cpuacct`` twin of its ``cpu`` directory where the
hierarchies are mounted apart, as on this project's machines) or ``cpu.stat``'s
``usage_usec`` (v2). A relative ``cgroup`` is resolved under the mount point.

``scheduler_py/devtools/emulated_hosts.py`` (the emulation's own module, with a host's
``traffic()``, ``cpu()`` and ``run()``) reads the same file; this module adds what a
benchmark needs on top: one snapshot of every counter at once, differences, inter-rack bytes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE_NAME = "emulated-hosts.json"
SYS_NET = Path("/sys/class/net")
CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CPU_HIERARCHIES = ("cpu,cpuacct", "cpuacct,cpu", "cpuacct", "cpu")


class EmulatedHostsError(ValueError):
    """The emulated-hosts file is missing or malformed, or a counter cannot be read; the
    message says which and what was expected."""


@dataclass(frozen=True)
class EmulatedHost:
    name: str
    supervisor: int
    netns: str
    address: str
    rack: str
    veth_root: str
    cgroup: str
    cpu_cores: float


@dataclass(frozen=True)
class Rack:
    name: str
    bridge: str
    uplink_veth_root: str


@dataclass(frozen=True)
class EmulatedHosts:
    core_bridge: str
    root_address: str
    host_mbit: float
    interrack_mbit: float
    cgroup_version: int
    hosts: tuple[EmulatedHost, ...]
    racks: tuple[Rack, ...]

    def host_by_address(self) -> dict[str, EmulatedHost]:
        return {host.address: host for host in self.hosts}

    def rack_of(self) -> dict[str, str]:
        """host name -> rack name"""
        return {host.name: host.rack for host in self.hosts}


def path_in(cluster_dir: Path) -> Path:
    return cluster_dir / "run" / FILE_NAME


def _field(item: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in item:
        raise EmulatedHostsError(f"{where}: expected key {key!r}, found keys {sorted(item)}")
    value = item[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise EmulatedHostsError(
            f"{where}: {key!r} should be a {kind.__name__}, found {type(value).__name__} {value!r}"
        )
    return value


def parse(data: Any, source: str = "emulated-hosts.json") -> EmulatedHosts:
    """The emulated hosts described by ``data`` (the file's JSON); raises
    :class:`EmulatedHostsError` naming the first missing or mistyped field."""
    if not isinstance(data, Mapping):
        raise EmulatedHostsError(f"{source}: expected a JSON object, found {type(data).__name__}")
    version = _field(data, "cgroup_version", int, source)
    if version not in (1, 2):
        raise EmulatedHostsError(f"{source}: cgroup_version should be 1 or 2, found {version}")
    raw_hosts = _field(data, "hosts", list, source)
    raw_racks = _field(data, "racks", list, source)
    hosts = []
    for i, item in enumerate(raw_hosts):
        where = f"{source}: hosts[{i}]"
        if not isinstance(item, Mapping):
            raise EmulatedHostsError(f"{where}: expected an object, found {item!r}")
        hosts.append(
            EmulatedHost(
                name=_field(item, "name", str, where),
                supervisor=_field(item, "supervisor", int, where),
                netns=_field(item, "netns", str, where),
                address=_field(item, "address", str, where),
                rack=_field(item, "rack", str, where),
                veth_root=_field(item, "veth_root", str, where),
                cgroup=_field(item, "cgroup", str, where),
                cpu_cores=_field(item, "cpu_cores", float, where),
            )
        )
    racks = []
    for i, item in enumerate(raw_racks):
        where = f"{source}: racks[{i}]"
        if not isinstance(item, Mapping):
            raise EmulatedHostsError(f"{where}: expected an object, found {item!r}")
        racks.append(
            Rack(
                name=_field(item, "name", str, where),
                bridge=_field(item, "bridge", str, where),
                uplink_veth_root=_field(item, "uplink_veth_root", str, where),
            )
        )
    if not hosts:
        raise EmulatedHostsError(f"{source}: 'hosts' is empty; expected one entry per supervisor")
    return EmulatedHosts(
        core_bridge=_field(data, "core_bridge", str, source),
        root_address=_field(data, "root_address", str, source),
        host_mbit=_field(data, "host_mbit", float, source),
        interrack_mbit=_field(data, "interrack_mbit", float, source),
        cgroup_version=version,
        hosts=tuple(hosts),
        racks=tuple(racks),
    )


def load(path: Path) -> EmulatedHosts:
    """Read and :func:`parse` the file at ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise EmulatedHostsError(
            f"cannot read {path} ({error.strerror}); it is written by "
            "`EMU_HOSTS=N deploy/cluster-up.sh`"
        ) from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise EmulatedHostsError(f"{path} is not JSON: {error}") from None
    return parse(data, str(path))


# --------------------------------------------------------------------------- counters


@dataclass(frozen=True)
class HostSample:
    sent_bytes: int
    """bytes the host sent (``rx_bytes`` of the root end of its veth)"""
    received_bytes: int
    """bytes delivered to the host (``tx_bytes`` of the root end)"""
    cpu_seconds: float
    """CPU time of the host's cgroup"""


@dataclass(frozen=True)
class Snapshot:
    """All counters at ``at`` (monotonic seconds); as a difference of two snapshots
    (:meth:`minus`), ``at`` is the span in seconds."""

    at: float
    hosts: Mapping[str, HostSample]
    rack_uplink_sent: Mapping[str, int]
    """rack name -> bytes that left the rack through its uplink (rx of the root end)"""

    def minus(self, earlier: Snapshot) -> Snapshot:
        return Snapshot(
            at=self.at - earlier.at,
            hosts={
                name: HostSample(
                    sample.sent_bytes - earlier.hosts[name].sent_bytes,
                    sample.received_bytes - earlier.hosts[name].received_bytes,
                    sample.cpu_seconds - earlier.hosts[name].cpu_seconds,
                )
                for name, sample in self.hosts.items()
                if name in earlier.hosts
            },
            rack_uplink_sent={
                rack: sent - earlier.rack_uplink_sent[rack]
                for rack, sent in self.rack_uplink_sent.items()
                if rack in earlier.rack_uplink_sent
            },
        )

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
    """Reads the counters of the hosts in ``hosts``; ``sys_net`` and ``cgroup_root`` are the
    sysfs and cgroup mount points (tests pass a fake tree)."""

    def __init__(
        self, hosts: EmulatedHosts, sys_net: Path = SYS_NET, cgroup_root: Path = CGROUP_ROOT
    ) -> None:
        self.hosts = hosts
        self.sys_net = sys_net
        self.cgroup_root = cgroup_root

    def cgroup_dir(self, host: EmulatedHost) -> Path:
        """Where the host's CPU time is: for cgroup v2 its directory; for v1 the directory
        holding ``cpuacct.usage`` — the same one on a combined ``cpu,cpuacct`` mount, the
        ``cpuacct`` twin of a ``cpu`` path where the two hierarchies are mounted apart."""
        if host.cgroup.startswith("/"):
            given = Path(host.cgroup)
            if self.hosts.cgroup_version == 2 or (given / "cpuacct.usage").is_file():
                return given
            parts = given.parts
            if "cpu" in parts:
                index = parts.index("cpu")
                twin = Path(*parts[:index], "cpuacct", *parts[index + 1 :])
                if twin.is_dir():
                    return twin
            return given
        relative = host.cgroup
        if self.hosts.cgroup_version == 2:
            return self.cgroup_root / relative
        for hierarchy in V1_CPU_HIERARCHIES:
            candidate = self.cgroup_root / hierarchy / relative
            if (candidate / "cpuacct.usage").is_file():
                return candidate
        return self.cgroup_root / V1_CPU_HIERARCHIES[0] / relative

    def cpu_seconds(self, host: EmulatedHost) -> float:
        directory = self.cgroup_dir(host)
        if self.hosts.cgroup_version == 1:
            text = _read(directory / "cpuacct.usage", host.name)
            return int(text.strip()) / 1e9
        for entry in _read(directory / "cpu.stat", host.name).splitlines():
            key, _, value = entry.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        raise EmulatedHostsError(f"{directory}/cpu.stat of host {host.name} has no usage_usec")

    def interface_bytes(self, interface: str, counter: str, owner: str) -> int:
        return int(_read(self.sys_net / interface / "statistics" / counter, owner).strip())

    def snapshot(self) -> Snapshot:
        at = time.monotonic()
        hosts = {
            host.name: HostSample(
                self.interface_bytes(host.veth_root, "rx_bytes", host.name),
                self.interface_bytes(host.veth_root, "tx_bytes", host.name),
                self.cpu_seconds(host),
            )
            for host in self.hosts.hosts
        }
        uplinks = {
            rack.name: self.interface_bytes(rack.uplink_veth_root, "rx_bytes", rack.name)
            for rack in self.hosts.racks
        }
        return Snapshot(at, hosts, uplinks)


def _read(path: Path, owner: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise EmulatedHostsError(
            f"cannot read {path} for {owner} ({error.strerror}); is the emulated cluster up "
            "(deploy/cluster-status.sh)?"
        ) from None
