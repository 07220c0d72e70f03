"""scheduler_py.devtools.emulated_hosts: the state file deploy/emulated-hosts.sh writes
(the shape deploy/README.md "Emulated hosts" documents), read back with each host's veth
counters and cgroup CPU figures, on files laid out as the kernel lays them out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_py.devtools import emulated_hosts
from scheduler_py.devtools.emulated_hosts import CpuStat, Traffic, load


def _state(cgroup: str, version: int) -> dict:
    return {
        "core_bridge": "spy3000-core",
        "root_address": "198.18.48.1",
        "host_mbit": 100,
        "interrack_mbit": 50.5,
        "cgroup_version": version,
        "hosts": [
            {
                "name": "h1",
                "supervisor": 1,
                "netns": "spy3000-h1",
                "address": "198.18.49.1",
                "rack": "/rack-1",
                "veth_root": "spy3000-h1",
                "cgroup": cgroup,
                "cpu_cores": 0.5,
            }
        ],
        "racks": [{"name": "/rack-1", "bridge": "spy3000-r1", "uplink_veth_root": "spy3000-r1c"}],
    }


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_v1_state_traffic_and_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cpu_group = tmp_path / "cgroup" / "cpu" / "spy3000" / "h1"
    _write(cpu_group / "cpu.stat", "nr_periods 120\nnr_throttled 7\nthrottled_time 5\n")
    _write(tmp_path / "cgroup" / "cpuacct" / "spy3000" / "h1" / "cpuacct.usage", "2500000000\n")
    _write(tmp_path / "net" / "spy3000-h1" / "statistics" / "tx_bytes", "4096\n")
    _write(tmp_path / "net" / "spy3000-h1" / "statistics" / "rx_bytes", "1024\n")
    _write(tmp_path / "run" / "emulated-hosts.json", json.dumps(_state(str(cpu_group), 1)))
    monkeypatch.setattr(emulated_hosts, "SYS_NET", tmp_path / "net")

    hosts = load(tmp_path)
    assert (hosts.host_mbit, hosts.interrack_mbit, hosts.cgroup_version) == (100.0, 50.5, 1)
    host = hosts.host("198.18.49.1")
    assert host is hosts.host("h1")
    assert (host.rack, host.cpu_cores) == ("/rack-1", 0.5)
    assert hosts.racks[0].uplink_veth_root == "spy3000-r1c"
    # the root end transmits what the host receives
    assert host.traffic() == Traffic(received=4096, sent=1024)
    assert host.cpu() == CpuStat(usage_s=2.5, periods=120, throttled=7)


def test_v2_cpu_time_comes_from_cpu_stat(tmp_path: Path) -> None:
    group = tmp_path / "cgroup" / "spy3000" / "h1"
    _write(group / "cpu.stat", "usage_usec 1500000\nnr_periods 10\nnr_throttled 3\n")
    _write(tmp_path / "run" / "emulated-hosts.json", json.dumps(_state(str(group), 2)))
    assert load(tmp_path).host("h1").cpu() == CpuStat(usage_s=1.5, periods=10, throttled=3)


def test_missing_state_file_says_how_to_start_emulated_hosts(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"EMU_HOSTS=N deploy/cluster-up\.sh"):
        load(tmp_path)
    _write(tmp_path / "run" / "emulated-hosts.json", json.dumps(_state("/x", 1)))
    with pytest.raises(KeyError, match="no emulated host 'h9'"):
        load(tmp_path).host("h9")
