"""Reading ``$CLUSTER_DIR/run/emulated-hosts.json`` and sampling the hosts' veth and cgroup
counters (``scheduler_py/devtools/host_counters.py``) against a fake sysfs/cgroup tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_py.devtools.host_counters import (
    CounterReader,
    EmulatedHostsError,
    load,
    parse,
    path_in,
)


def description(version: int = 1) -> dict:
    return {
        "core_bridge": "emu-core",
        "root_address": "198.18.0.1",
        "host_mbit": 100,
        "interrack_mbit": 50.0,
        "cgroup_version": version,
        "hosts": [
            {
                "name": f"h{i}",
                "supervisor": i,
                "netns": f"emu-h{i}",
                "address": f"198.18.1.{i}",
                "rack": "/rack-1" if i == 1 else "/rack-2",
                "veth_root": f"emu-h{i}-r",
                "cgroup": f"scheduler-py/h{i}",
                "cpu_cores": 0.3,
            }
            for i in (1, 2)
        ],
        "racks": [
            {"name": "/rack-1", "bridge": "emu-r1", "uplink_veth_root": "emu-r1-up"},
            {"name": "/rack-2", "bridge": "emu-r2", "uplink_veth_root": "emu-r2-up"},
        ],
    }


def write_counters(sys_net: Path, interface: str, rx: int, tx: int) -> None:
    stats = sys_net / interface / "statistics"
    stats.mkdir(parents=True, exist_ok=True)
    (stats / "rx_bytes").write_text(f"{rx}\n")
    (stats / "tx_bytes").write_text(f"{tx}\n")


def write_cpu(cgroup_root: Path, version: int, host: str, seconds: float) -> None:
    if version == 1:
        directory = cgroup_root / "cpu,cpuacct" / "scheduler-py" / host
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "cpuacct.usage").write_text(f"{int(seconds * 1e9)}\n")
    else:
        directory = cgroup_root / "scheduler-py" / host
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "cpu.stat").write_text(
            f"usage_usec {int(seconds * 1e6)}\nuser_usec 1\nsystem_usec 2\n"
        )


def test_load_reads_every_field(tmp_path: Path) -> None:
    path = path_in(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(description()))
    hosts = load(path)
    assert hosts.host_mbit == 100.0 and hosts.cgroup_version == 1
    assert [h.name for h in hosts.hosts] == ["h1", "h2"]
    assert hosts.host_by_address()["198.18.1.2"].supervisor == 2
    assert hosts.rack_of() == {"h1": "/rack-1", "h2": "/rack-2"}
    assert hosts.racks[1].uplink_veth_root == "emu-r2-up"


def test_missing_file_says_who_writes_it(tmp_path: Path) -> None:
    with pytest.raises(EmulatedHostsError, match=r"EMU_HOSTS=N deploy/cluster-up\.sh"):
        load(tmp_path / "nope.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("hosts"), "expected key 'hosts'"),
        (lambda d: d.update(cgroup_version=3), "cgroup_version should be 1 or 2"),
        (lambda d: d["hosts"][0].update(cpu_cores="lots"), r"hosts\[0\]: 'cpu_cores' should be"),
        (lambda d: d["hosts"][1].pop("veth_root"), r"hosts\[1\]: expected key 'veth_root'"),
        (lambda d: d.update(hosts=[]), "'hosts' is empty"),
        (lambda d: d["racks"].append(7), r"racks\[2\]: expected an object"),
    ],
)
def test_malformed_descriptions_name_the_field(change, message: str) -> None:
    data = description()
    change(data)
    with pytest.raises(EmulatedHostsError, match=message):
        parse(data)


@pytest.mark.parametrize("version", [1, 2])
def test_counter_deltas(tmp_path: Path, version: int) -> None:
    hosts = parse(description(version))
    sys_net, cgroups = tmp_path / "net", tmp_path / "cgroup"
    write_counters(sys_net, "emu-h1-r", rx=1000, tx=50)
    write_counters(sys_net, "emu-h2-r", rx=2000, tx=70)
    write_counters(sys_net, "emu-r1-up", rx=10, tx=0)
    write_counters(sys_net, "emu-r2-up", rx=20, tx=0)
    write_cpu(cgroups, version, "h1", 1.0)
    write_cpu(cgroups, version, "h2", 2.0)
    reader = CounterReader(hosts, sys_net=sys_net, cgroup_root=cgroups)
    before = reader.snapshot()
    write_counters(sys_net, "emu-h1-r", rx=5000, tx=150)
    write_counters(sys_net, "emu-h2-r", rx=2500, tx=170)
    write_counters(sys_net, "emu-r1-up", rx=410, tx=0)
    write_counters(sys_net, "emu-r2-up", rx=20, tx=0)
    write_cpu(cgroups, version, "h1", 1.5)
    write_cpu(cgroups, version, "h2", 2.25)
    delta = reader.snapshot().minus(before)
    assert delta.inter_host_bytes == 4000 + 500
    assert delta.hosts["h1"].received_bytes == 100
    assert delta.inter_rack_bytes == 400
    assert delta.hosts["h1"].cpu_seconds == pytest.approx(0.5)
    assert delta.hosts["h2"].cpu_seconds == pytest.approx(0.25)
    spanned = type(delta)(at=2.0, hosts=delta.hosts, rack_uplink_sent={})
    assert spanned.cpu_cores() == pytest.approx({"h1": 0.25, "h2": 0.125})


def test_absolute_cgroup_path_is_used_as_is(tmp_path: Path) -> None:
    data = description(2)
    own = tmp_path / "elsewhere" / "h1"
    own.mkdir(parents=True)
    (own / "cpu.stat").write_text("usage_usec 3000000\n")
    data["hosts"] = data["hosts"][:1]
    data["hosts"][0]["cgroup"] = str(own)
    reader = CounterReader(parse(data), sys_net=tmp_path, cgroup_root=tmp_path / "cg")
    assert reader.cpu_seconds(reader.hosts.hosts[0]) == pytest.approx(3.0)


def test_unreadable_counter_is_a_clear_error(tmp_path: Path) -> None:
    reader = CounterReader(parse(description()), sys_net=tmp_path, cgroup_root=tmp_path)
    with pytest.raises(EmulatedHostsError, match=r"emu-h1-r.*for h1.*cluster-status"):
        reader.snapshot()


def test_v1_with_cpu_and_cpuacct_mounted_apart(tmp_path: Path) -> None:
    """The emulation writes the host's ``cpu`` hierarchy directory; ``cpuacct.usage`` is in
    the ``cpuacct`` twin (this machine mounts the two v1 hierarchies separately)."""
    data = description(1)
    data["hosts"] = data["hosts"][:1]
    cpu_dir = tmp_path / "cgroup" / "cpu" / "emu" / "h1"
    acct_dir = tmp_path / "cgroup" / "cpuacct" / "emu" / "h1"
    cpu_dir.mkdir(parents=True)
    acct_dir.mkdir(parents=True)
    (cpu_dir / "cpu.stat").write_text("nr_periods 10\nnr_throttled 3\n")
    (acct_dir / "cpuacct.usage").write_text("2500000000\n")
    data["hosts"][0]["cgroup"] = str(cpu_dir)
    reader = CounterReader(parse(data), sys_net=tmp_path, cgroup_root=tmp_path / "none")
    assert reader.cgroup_dir(reader.hosts.hosts[0]) == acct_dir
    assert reader.cpu_seconds(reader.hosts.hosts[0]) == pytest.approx(2.5)
