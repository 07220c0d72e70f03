"""Snapshots of every emulated host's counters (``scheduler_py/devtools/host_counters.py``,
on top of ``scheduler_py/devtools/emulated_hosts.py``) against a fake sysfs/cgroup tree:
the state file as ``deploy/emulated-hosts.sh`` writes it, veth counters, cgroup v1 (cpu and
cpuacct mounted apart, as on this project's machines) and v2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_py.devtools import emulated_hosts
from scheduler_py.devtools.host_counters import CounterReader, EmulatedHostsError, load_if_present


def write_state(cluster: Path, cgroups: Path, version: int) -> None:
    hosts = []
    for i in (1, 2):
        cgroup = cgroups / ("cpu" if version == 1 else "") / "emu" / f"h{i}"
        hosts.append(
            {
                "name": f"h{i}",
                "supervisor": i,
                "netns": f"emu-h{i}",
                "address": f"198.18.1.{i}",
                "rack": f"/rack-{i}",
                "veth_root": f"emu-h{i}",
                "cgroup": str(cgroup),
                "cpu_cores": 0.3,
            }
        )
    state = {
        "core_bridge": "emu-core",
        "root_address": "198.18.0.1",
        "host_mbit": 100,
        "interrack_mbit": 50,
        "cgroup_version": version,
        "hosts": hosts,
        "racks": [
            {"name": "/rack-1", "bridge": "emu-r1", "uplink_veth_root": "emu-r1c"},
            {"name": "/rack-2", "bridge": "emu-r2", "uplink_veth_root": "emu-r2c"},
        ],
    }
    (cluster / "run").mkdir(parents=True, exist_ok=True)
    (cluster / emulated_hosts.STATE_FILE).write_text(json.dumps(state))


def write_counters(sys_net: Path, interface: str, rx: int, tx: int = 0) -> None:
    stats = sys_net / interface / "statistics"
    stats.mkdir(parents=True, exist_ok=True)
    (stats / "rx_bytes").write_text(f"{rx}\n")
    (stats / "tx_bytes").write_text(f"{tx}\n")


def write_cpu(cgroups: Path, version: int, host: str, seconds: float, throttled: int) -> None:
    if version == 1:
        cpu, acct = cgroups / "cpu" / "emu" / host, cgroups / "cpuacct" / "emu" / host
        acct.mkdir(parents=True, exist_ok=True)
        (acct / "cpuacct.usage").write_text(f"{int(seconds * 1e9)}\n")
        usage = ""
    else:
        cpu = cgroups / "emu" / host
        usage = f"usage_usec {int(seconds * 1e6)}\n"
    cpu.mkdir(parents=True, exist_ok=True)
    (cpu / "cpu.stat").write_text(f"{usage}nr_periods 100\nnr_throttled {throttled}\n")


def test_no_state_file_means_no_emulated_hosts(tmp_path: Path) -> None:
    assert load_if_present(tmp_path) is None


@pytest.mark.parametrize("version", [1, 2])
def test_counter_deltas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: int) -> None:
    cluster, sys_net, cgroups = tmp_path / "cluster", tmp_path / "net", tmp_path / "cgroup"
    monkeypatch.setattr(emulated_hosts, "SYS_NET", sys_net)
    write_state(cluster, cgroups, version)
    write_counters(sys_net, "emu-h1", rx=1000, tx=50)
    write_counters(sys_net, "emu-h2", rx=2000, tx=70)
    write_counters(sys_net, "emu-r1c", rx=10)
    write_counters(sys_net, "emu-r2c", rx=20)
    write_cpu(cgroups, version, "h1", 1.0, throttled=0)
    write_cpu(cgroups, version, "h2", 2.0, throttled=5)
    hosts = load_if_present(cluster)
    assert hosts is not None and [h.name for h in hosts.hosts] == ["h1", "h2"]
    reader = CounterReader(hosts)
    before = reader.snapshot()
    write_counters(sys_net, "emu-h1", rx=5000, tx=150)
    write_counters(sys_net, "emu-h2", rx=2500, tx=170)
    write_counters(sys_net, "emu-r1c", rx=410)
    write_counters(sys_net, "emu-r2c", rx=20)
    write_cpu(cgroups, version, "h1", 1.5, throttled=0)
    write_cpu(cgroups, version, "h2", 2.25, throttled=9)
    delta = reader.snapshot().minus(before)
    assert delta.inter_host_bytes == 4000 + 500
    assert delta.hosts["h1"].received_bytes == 100
    assert delta.inter_rack_bytes == 400
    assert delta.hosts["h1"].cpu_seconds == pytest.approx(0.5)
    assert delta.hosts["h2"].cpu_seconds == pytest.approx(0.25)
    assert delta.hosts["h2"].throttled_periods == 4
    spanned = type(delta)(at=2.0, hosts=delta.hosts, rack_uplink_sent={})
    assert spanned.cpu_cores() == pytest.approx({"h1": 0.25, "h2": 0.125})


def test_unreadable_counter_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emulated_hosts, "SYS_NET", tmp_path / "net")
    write_state(tmp_path / "cluster", tmp_path / "cgroup", 2)
    reader = CounterReader(load_if_present(tmp_path / "cluster"))
    with pytest.raises(EmulatedHostsError, match=r"emulated host h1 \(veth emu-h1.*cluster-status"):
        reader.snapshot()
