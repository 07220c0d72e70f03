"""The emulated-hosts cluster (``EMU_HOSTS=4 deploy/cluster-up.sh``; deploy/README.md,
"Emulated hosts"): 4 supervisors, each in its own network namespace and CPU cgroup (0.5 core)
on 2 racks with htb bandwidth limits. A JVM topology placed by the brain (``even``) runs
across hosts and its bytes show on the hosts' veth counters; a host over its CPU quota is
throttled; the brain's snapshot carries the racks; cluster-down leaves nothing behind.

Needs root, network namespaces and a cgroup CPU controller; where the kernel refuses any of
them the module is skipped with that reason.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scheduler_py.devtools.emulated_hosts import EmulatedHost, load, transfer_mbit
from scheduler_py.devtools.jvm_topologies import submit
from tests.cluster.conftest import start_cluster
from tests.cluster.waiting import machine_timeout, wait_until

pytestmark = pytest.mark.cluster

CGROUP_ROOT = Path("/sys/fs/cgroup")
HOSTS, RACKS, HOST_CPU = 4, 2, 0.5
EMU_HOST_MBIT, EMU_INTERRACK_MBIT = 100, 50
"""deploy/cluster-common.sh's default link rates (the test sets neither)"""
# shaping is approximate (htb bursts, packet headers beside the payload)
RATE_TOLERANCE = 1.15
# CPU time over a window of a few seconds may overshoot the quota by a period's worth
CPU_TOLERANCE = 1.25


def _why_no_emulation() -> str:
    if os.geteuid() != 0:
        return "emulated hosts need root (network namespaces, bridges, tc, cgroups); not root"
    for command in ("ip", "tc", "nsenter", "unshare"):
        if shutil.which(command) is None:
            return f"'{command}' is not installed (iproute2 / util-linux)"
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"the kernel refuses a network namespace: {probe.stderr.strip()}"
    unified = (CGROUP_ROOT / "cgroup.controllers").exists()
    if unified and "cpu" not in (CGROUP_ROOT / "cgroup.controllers").read_text().split():
        return "cgroup v2 without the cpu controller: no per-host CPU quota"
    if not unified and not (CGROUP_ROOT / "cpu" / "cpu.cfs_quota_us").exists():
        return f"no cgroup v2 hierarchy and no v1 cpu controller under {CGROUP_ROOT}"
    if not os.access(CGROUP_ROOT if unified else CGROUP_ROOT / "cpu", os.W_OK):
        return f"the cgroup hierarchy under {CGROUP_ROOT} is read-only here"
    return ""


if reason := _why_no_emulation():
    pytest.skip(reason, allow_module_level=True)


def _leftovers(prefix: str) -> list[str]:
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    found = [n for n in names if n.startswith(f"{prefix}-")]
    found += [
        line.split(": ")[1].split("@")[0]
        for line in links.splitlines()
        if line.split(": ")[1].startswith(f"{prefix}-")
    ]
    found += [str(p) for p in CGROUP_ROOT.glob(f"*/{prefix}") if p.is_dir()]
    found += [str(p) for p in CGROUP_ROOT.glob(prefix) if p.is_dir()]
    return found


def _net_namespace(pid: int) -> int:
    return os.stat(f"/proc/{pid}/ns/net").st_ino


def _check_supervisors_inside_their_hosts(cluster, hosts) -> None:
    for host in hosts.hosts:
        pid = int((cluster.directory / "run" / f"supervisor-{host.supervisor}.pid").read_text())
        assert _net_namespace(pid) == os.stat(f"/run/netns/{host.netns}").st_ino, (
            f"supervisor-{host.supervisor} is not in namespace {host.netns}"
        )
        assert str(pid) in (Path(host.cgroup) / "cgroup.procs").read_text().split(), (
            f"supervisor-{host.supervisor} (pid {pid}) is not in cgroup {host.cgroup}"
        )
        conf = cluster.directory / "conf" / f"supervisor-{host.supervisor}" / "storm.yaml"
        assert f"supervisor.cpu.capacity: {100 * HOST_CPU:.1f}" in conf.read_text()


def _check_shaping(hosts, port: int) -> tuple[float, float]:
    """One TCP stream within a rack and one between racks stay under their rates."""
    by_rack: dict[str, list[EmulatedHost]] = {}
    for host in hosts.hosts:
        by_rack.setdefault(host.rack, []).append(host)
    first, second = (by_rack[rack] for rack in sorted(by_rack)[:2])
    within = transfer_mbit(first[0], first[1], port)
    between = transfer_mbit(first[0], second[0], port + 1)
    assert 0 < within <= hosts.host_mbit * RATE_TOLERANCE, (within, hosts.host_mbit)
    assert 0 < between <= hosts.interrack_mbit * RATE_TOLERANCE, (between, hosts.interrack_mbit)
    return within, between


def _check_throttled(host: EmulatedHost) -> None:
    """Four busy processes in ``host`` want 4 cores; its quota holds it to ``cpu_cores``.
    The host's group gets a larger CPU weight for these seconds, so that on a busy machine
    the scheduler offers it more than its quota and the quota, not the contention, binds."""
    weight_file, weight = _weight(host)
    saved = weight_file.read_text().strip()
    burner = host.run(
        sys.executable,
        "-c",
        "import os, time\n"
        "os.fork(); os.fork()\n"
        "end = time.monotonic() + 600\n"
        "while time.monotonic() < end: pass\n",
        start_new_session=True,
    )
    try:
        weight_file.write_text(weight)
        before, started = host.cpu(), time.monotonic()
        wait_until(
            lambda: host.cpu().throttled > before.throttled,
            machine_timeout(20),
            f"{host.name}'s cgroup to be throttled (nr_throttled to grow)",
            lambda: f"(cpu.stat then {before}, now {host.cpu()})",
        )
        time.sleep(2)  # a few more periods for the bound below
        after, ended = host.cpu(), time.monotonic()
    finally:
        os.killpg(burner.pid, signal.SIGKILL)
        burner.wait()
        weight_file.write_text(saved)
    cores = (after.usage_s - before.usage_s) / (ended - started)
    assert cores <= host.cpu_cores * CPU_TOLERANCE, (
        f"{host.name} used {cores:.2f} cores with a quota of {host.cpu_cores}"
    )


def _weight(host: EmulatedHost) -> tuple[Path, str]:
    group = Path(host.cgroup)
    if host.cgroup_version == 2:
        return group / "cpu.weight", "1000"
    return group / "cpu.shares", str(10 * 1024)


def test_emulated_hosts_place_shape_throttle_and_clean_up(tmp_path: Path) -> None:
    offset = int(os.environ.get("TEST_CLUSTER_PORT_OFFSET", "1000")) + 500
    settings = {
        "CLUSTER_PORT_OFFSET": str(offset),
        "EMU_HOSTS": str(HOSTS),
        "EMU_RACKS": str(RACKS),
        "EMU_HOST_CPU": str(HOST_CPU),
    }
    prefix = f"spy{offset}"
    with start_cluster(tmp_path / "cluster", **settings) as cluster:
        # under the cluster's directory: cluster-down stops the brain by that mark
        snapshots = cluster.directory / "logs" / "brain-snapshots.json"
        hosts = load(cluster.directory)
        assert [h.name for h in hosts.hosts] == [f"h{i}" for i in range(1, HOSTS + 1)]
        assert sorted({h.rack for h in hosts.hosts}) == ["/rack-1", "/rack-2"]
        assert all(h.netns.startswith(f"{prefix}-") for h in hosts.hosts)
        _check_supervisors_inside_their_hosts(cluster, hosts)
        within, between = _check_shaping(hosts, 20_000 + offset)
        print(f"TCP within a rack {within:.1f} Mbit/s, between racks {between:.1f} Mbit/s")

        # the real brain, recording what the shim sends
        cluster.start_brain(
            sys.executable, "-m", "tests.cluster.recording_brain",
            "--port", str(cluster.brain_port), "--snapshots", str(snapshots),
        )  # fmt: skip
        sent_before = {h.address: h.traffic().sent for h in hosts.hosts}
        name = "emu-linear"
        conf = {
            "scheduler.brain.algorithm": "even",
            "topology.workers": HOSTS,
            "bench.spout.rate": 200,
            "bench.payload.bytes": 1024,
            "bench.cpu.load": 10,  # 4 hosts × 50 CPU points hold the 7 executors and the acker
        }
        try:
            submit("linear", name, conf, env=cluster.env)
            state = {}

            def placed_by_brain_on_hosts() -> set[str]:
                state["now"] = cluster.nimbus.topology_state(name)
                now = state["now"]
                if not now or "scheduler-py brain" not in (now.sched_status or ""):
                    return set()
                return {worker.split(":")[0] for worker in now.workers}

            used = wait_until(
                lambda: len(placed_by_brain_on_hosts()) >= 2 and placed_by_brain_on_hosts(),
                machine_timeout(90),
                f"{name} to be placed by the brain on 2 or more hosts",
                lambda: f"(last seen: {state.get('now')})",
            )

            def every_used_host_sent(threshold: int) -> bool:
                return all(hosts.host(a).traffic().sent - sent_before[a] >= threshold for a in used)

            wait_until(
                lambda: every_used_host_sent(256 * 1024),
                machine_timeout(90),
                f"each host of {name} ({sorted(used)}) to send 256 KB over its veth",
                lambda: (
                    f"(sent: { {a: hosts.host(a).traffic().sent - sent_before[a] for a in used} })"
                ),
            )
            wait_until(
                lambda: cluster.nimbus.topology_state(name).acked > 0,
                machine_timeout(60),
                f"{name}'s spouts to report acked tuples (executor stats every 5 s)",
                lambda: f"(last seen: {cluster.nimbus.topology_state(name)})",
            )

            recorded = wait_until(
                lambda: snapshots.exists() and json.loads(snapshots.read_text()),
                machine_timeout(30),
                "a snapshot from the shim",
            )
            assert recorded["racks"] == {h.address: h.rack for h in hosts.hosts}, recorded
            # each supervisor declares the rates it is shaped to (supervisor.scheduler.meta)
            declared = [float(EMU_HOST_MBIT), float(EMU_INTERRACK_MBIT)]
            assert recorded["links"] == {h.address: declared for h in hosts.hosts}, recorded

            _check_throttled(hosts.hosts[0])
        finally:
            cluster.kill(name)
    assert not _leftovers(prefix), f"cluster-down left behind: {_leftovers(prefix)}"
