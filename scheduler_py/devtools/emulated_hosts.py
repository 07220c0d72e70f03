"""The emulated hosts of a local cluster (``EMU_HOSTS=N deploy/cluster-up.sh``;
``deploy/emulated-hosts.sh``, deploy/README.md "Emulated hosts") as Python values: the state
file ``$CLUSTER_DIR/run/emulated-hosts.json``, each host's traffic from its veth counters and
its CPU time and throttling from its cgroup, and a timed TCP transfer between two hosts::

    from scheduler_py.devtools.emulated_hosts import load
    hosts = load(cluster_dir)
    before = {h.name: h.traffic() for h in hosts.hosts}
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATE_FILE = Path("run") / "emulated-hosts.json"
SYS_NET = Path("/sys/class/net")


@dataclass(frozen=True)
class Traffic:
    """Bytes the host received and sent (its veth's root end counts them the other way)."""

    received: int
    sent: int


@dataclass(frozen=True)
class CpuStat:
    usage_s: float
    """CPU time the host's processes used (cgroup v1 ``cpuacct.usage``, v2 ``usage_usec``)"""
    periods: int
    """quota periods in which the host ran (``nr_periods``)"""
    throttled: int
    """periods in which it used up its quota and was stopped (``nr_throttled``)"""


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
    cgroup_version: int

    def traffic(self) -> Traffic:
        """This host's bytes so far: the root-namespace end of its veth transmits what the
        host receives and receives what it sends."""
        stats = SYS_NET / self.veth_root / "statistics"
        return Traffic(
            received=int((stats / "tx_bytes").read_text()),
            sent=int((stats / "rx_bytes").read_text()),
        )

    def cpu(self) -> CpuStat:
        group = Path(self.cgroup)
        stat = dict(
            line.split(maxsplit=1) for line in (group / "cpu.stat").read_text().splitlines()
        )
        if self.cgroup_version == 2:
            usage_s = int(stat["usage_usec"]) / 1e6
        else:  # v1: the CPU time is in the cpuacct hierarchy, at the same place
            usage_s = int(_cpuacct_dir(group).joinpath("cpuacct.usage").read_text()) / 1e9
        return CpuStat(usage_s, int(stat["nr_periods"]), int(stat["nr_throttled"]))

    def run(self, *command: str, **popen: Any) -> subprocess.Popen:
        """Start ``command`` as a process of this host: in its cgroup(s) (joined before the
        exec, as ``deploy/emulated-hosts.sh exec`` does) and its network namespace."""
        groups = [Path(self.cgroup)]
        if self.cgroup_version == 1 and _cpuacct_dir(groups[0]) != groups[0]:
            groups.append(_cpuacct_dir(groups[0]))

        def join() -> None:
            for group in groups:
                (group / "cgroup.procs").write_text(str(os.getpid()))

        return subprocess.Popen(
            ["nsenter", f"--net=/run/netns/{self.netns}", "--", *command],
            preexec_fn=join,  # only writes to cgroup.procs, before the exec
            **popen,
        )


def _cpuacct_dir(cpu_group: Path) -> Path:
    parts = cpu_group.parts
    index = parts.index("cpu") if "cpu" in parts else -1
    if index < 0:
        return cpu_group
    cpuacct = Path(*parts[:index], "cpuacct", *parts[index + 1 :])
    return cpuacct if cpuacct.is_dir() else cpu_group


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

    def host(self, name: str) -> EmulatedHost:
        for host in self.hosts:
            if host.name == name or host.address == name:
                return host
        raise KeyError(f"no emulated host {name!r}; hosts: {[h.name for h in self.hosts]}")


def load(cluster_dir: Path | str) -> EmulatedHosts:
    """The emulated hosts of the cluster in ``cluster_dir``; a clear error when it has none."""
    path = Path(cluster_dir) / STATE_FILE
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path} does not exist: the cluster in {cluster_dir} runs without emulated hosts "
            "(start it with EMU_HOSTS=N deploy/cluster-up.sh)"
        ) from None
    version = int(state["cgroup_version"])
    return EmulatedHosts(
        core_bridge=state["core_bridge"],
        root_address=state["root_address"],
        host_mbit=float(state["host_mbit"]),
        interrack_mbit=float(state["interrack_mbit"]),
        cgroup_version=version,
        hosts=tuple(EmulatedHost(**h, cgroup_version=version) for h in state["hosts"]),
        racks=tuple(Rack(**r) for r in state["racks"]),
    )


# A sender and a receiver as one small script, so the transfer needs nothing but Python.
_PROBE = """
import socket, sys, time
mode, address, port, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
if mode == "receive":
    server = socket.create_server((address, port))
    print("ready", flush=True)
    connection, _ = server.accept()
    total, first = 0, None
    while chunk := connection.recv(1 << 16):
        first = first or time.monotonic()
        total += len(chunk)
    print(total, time.monotonic() - (first or time.monotonic()), flush=True)
else:
    connection = socket.create_connection((address, port), timeout=10)
    block, end = b"x" * (1 << 16), time.monotonic() + seconds
    while time.monotonic() < end:
        connection.sendall(block)
    connection.close()
"""


def transfer_mbit(
    sender: EmulatedHost, receiver: EmulatedHost, port: int, seconds: float = 3.0
) -> float:
    """Mbit/s of one TCP stream from ``sender`` to ``receiver`` over ``seconds`` (payload
    bytes at the receiver over the time from its first to its last byte)."""
    timeout = seconds + 30
    receive = receiver.run(
        sys.executable, "-c", _PROBE, "receive", receiver.address, str(port), str(seconds),
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert receive.stdout is not None
        if receive.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the receiver on {receiver.name} did not start")
        send = sender.run(
            sys.executable, "-c", _PROBE, "send", receiver.address, str(port), str(seconds)
        )
        send.wait(timeout=timeout)
        total, elapsed = receive.stdout.readline().split()
        receive.wait(timeout=timeout)
    finally:
        if receive.poll() is None:
            receive.kill()
    return int(total) * 8 / 1e6 / max(float(elapsed), 1e-6)
