"""Cluster addresses from Storm's storm.yaml (``scheduler_py/config/storm_conf.py``) and how
the commands combine them with their flags and ``SCHEDULER_PY_*`` variables
(``scheduler_py/cli/cluster_options.py``)."""

from __future__ import annotations

import argparse
import logging
import re
import socket
from pathlib import Path

import pytest

from scheduler_py.cli import build_parser, exit_codes, main
from scheduler_py.cli.cluster_options import resolve
from scheduler_py.config import storm_conf
from scheduler_py.config.storm_conf import StormConfError

HA_CLUSTER = """\
# a three-node HA cluster, as an operator writes it
storm.zookeeper.servers:
  - "zk1.example.org"
  - "zk2.example.org"
  - "zk3.example.org:2191"
storm.zookeeper.port: 2182
nimbus.seeds: ["nimbus1.example.org", "nimbus2.example.org"]
nimbus.thrift.port: 6628
storm.scheduler: "io.schedulerpy.storm.BrainScheduler"
scheduler.brain.host: "0.0.0.0"
scheduler.brain.port: 9700
scheduler.monitor.zk.root: "/team-a/scheduler-py"
"""


@pytest.fixture(autouse=True)
def no_ambient_storm(monkeypatch):
    """The tests say where storm.yaml is; nothing from the shell running them (make test
    exports STORM_HOME) nor its SCHEDULER_PY_* variables."""
    for name in (
        "STORM_CONF_DIR",
        "STORM_HOME",
        "SCHEDULER_PY_ZOOKEEPER",
        "SCHEDULER_PY_NIMBUS",
        "SCHEDULER_PY_BRAIN",
        "STORM_NIMBUS",
        "STREAMPARSE_NIMBUS",
        "SCHEDULER_BRAIN",
    ):
        monkeypatch.delenv(name, raising=False)


def _write(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "storm.yaml"
    path.write_text(text)
    return path


def test_an_ha_cluster_gives_every_address(tmp_path):
    conf = storm_conf.load(str(_write(tmp_path, HA_CLUSTER)))
    assert conf.zookeeper() == "zk1.example.org:2182,zk2.example.org:2182,zk3.example.org:2191"
    assert conf.nimbus() == (("nimbus1.example.org", 6628), ("nimbus2.example.org", 6628))
    assert conf.brain() == "127.0.0.1:9700"  # the shim's wildcard bind, reached locally
    assert conf.monitor_root == "/team-a/scheduler-py"


def test_storms_defaults_fill_the_ports_and_an_all_comment_file_gives_nothing(tmp_path):
    conf = storm_conf.parse('storm.zookeeper.servers: ["zk"]\nnimbus.seeds: ["n"]\n', None)
    assert conf.zookeeper() == "zk:2181" and conf.nimbus() == (("n", 6627),)
    assert conf.brain() is None and conf.monitor_root is None
    empty = storm_conf.parse("# storm.zookeeper.servers:\n#   - localhost\n", None)
    assert empty.zookeeper() is None and empty.nimbus() == () and empty.brain() is None


def test_the_deprecated_nimbus_host_is_read_without_seeds_as_storm_does():
    conf = storm_conf.parse('nimbus.host: "old-nimbus"\n', None)
    assert conf.nimbus() == (("old-nimbus", 6627),)
    both = storm_conf.parse('nimbus.host: "old"\nnimbus.seeds: ["new"]\n', None)
    assert both.nimbus() == (("new", 6627),)


def test_a_conf_directory_and_the_environment_locate_the_file(tmp_path):
    path = _write(tmp_path / "conf", "nimbus.seeds: [a]\n")
    assert storm_conf.locate(str(tmp_path / "conf"), {}) == path
    assert storm_conf.locate(None, {"STORM_CONF_DIR": str(tmp_path / "conf")}) == path
    home = tmp_path / "storm-home"
    in_home = _write(home / "conf", "nimbus.seeds: [b]\n")
    assert storm_conf.locate(None, {"STORM_HOME": str(home)}) == in_home
    # STORM_CONF_DIR first, as Storm's bin/storm; one that has no storm.yaml is passed over
    env = {"STORM_CONF_DIR": str(tmp_path / "conf"), "STORM_HOME": str(home)}
    assert storm_conf.locate(None, env) == path
    env["STORM_CONF_DIR"] = str(tmp_path / "empty")
    assert storm_conf.locate(None, env) == in_home
    assert storm_conf.locate(None, {}) is None
    assert storm_conf.load(None, {}) is storm_conf.NO_STORM_CONF


def test_a_named_file_that_is_missing_says_what_to_do(tmp_path):
    with pytest.raises(StormConfError) as error:
        storm_conf.locate(str(tmp_path / "nowhere"), {})
    message = str(error.value)
    assert str(tmp_path / "nowhere") in message
    assert "expected Storm's storm.yaml" in message and "--storm-conf" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("storm.zookeeper.servers: [zk1\n", "is not valid YAML"),
        ("- just\n- a list\n", "expected a mapping of Storm keys"),
        (
            'storm.zookeeper.servers: "zk1"\n',
            "storm.zookeeper.servers must be a non-empty YAML list",
        ),
        ("nimbus.seeds: []\n", "nimbus.seeds must be a non-empty YAML list"),
        ("nimbus.seeds: [1, 2]\n", "nimbus.seeds must be a list of host names"),
        ("storm.zookeeper.port: 99999\n", "storm.zookeeper.port must be a port number"),
        ("nimbus.thrift.port: true\n", "nimbus.thrift.port must be a port number"),
        ("scheduler.brain.host: [a]\n", "scheduler.brain.host must be a non-empty string"),
        ("!!python/object/apply:os.system ['true']\n", "is not valid YAML"),
    ],
)
def test_a_malformed_file_names_the_file_the_key_and_what_was_expected(tmp_path, text, expected):
    path = _write(tmp_path, text)
    with pytest.raises(StormConfError) as error:
        storm_conf.load(str(path))
    message = str(error.value)
    assert str(path) in message and expected in message
    assert "fix" in message  # and what to do


def test_a_port_written_as_text_is_accepted():
    assert storm_conf.parse('nimbus.thrift.port: "7000"\nnimbus.seeds: [n]\n', None).nimbus() == (
        ("n", 7000),
    )


def _aggregate_args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["aggregate", *argv])


def test_flags_override_the_environment_which_overrides_storm_yaml(tmp_path, monkeypatch):
    path = _write(tmp_path, HA_CLUSTER)
    from_file = resolve(_aggregate_args("--storm-conf", str(path)))
    assert from_file.zookeeper.startswith("zk1.example.org:2182")
    assert from_file.nimbus[0] == ("nimbus1.example.org", 6628)
    assert from_file.monitor_root == "/team-a/scheduler-py"
    monkeypatch.setenv("SCHEDULER_PY_ZOOKEEPER", "env-zk:2181")
    assert resolve(_aggregate_args("--storm-conf", str(path))).zookeeper == "env-zk:2181"
    flags = resolve(
        _aggregate_args(
            "--storm-conf",
            str(path),
            "--zookeeper",
            "flag-zk:2181",
            "--nimbus",
            "flag-nimbus:7000,other",
            "--monitor-root",
            "/flag",
        )
    )
    assert flags.zookeeper == "flag-zk:2181"
    assert flags.nimbus == (("flag-nimbus", 7000), ("other", 6627))
    assert flags.monitor_root == "/flag"


def test_storm_home_is_read_by_default_and_no_storm_conf_reads_nothing(tmp_path, monkeypatch):
    _write(tmp_path / "conf", HA_CLUSTER)
    monkeypatch.setenv("STORM_HOME", str(tmp_path))
    assert resolve(_aggregate_args()).nimbus[0] == ("nimbus1.example.org", 6628)
    bare = resolve(_aggregate_args("--no-storm-conf"))
    assert bare.zookeeper is None and bare.nimbus == () and bare.monitor_root == "/scheduler-py"


def test_the_older_root_flag_is_a_hidden_alias_of_monitor_root():
    assert resolve(_aggregate_args("--no-storm-conf", "--root", "/old")).monitor_root == "/old"
    help_text = build_parser()._subparsers._group_actions[0].choices["aggregate"].format_help()
    assert "--monitor-root" in help_text and not re.search(r"(?<![\w-])--root\b", help_text)


def test_serve_switches_measured_costs_and_the_controller_on_from_storm_yaml(tmp_path):
    from scheduler_py.cli.operator import build_controller
    from scheduler_py.scheduling.round import RoundConfig

    path = _write(tmp_path / "conf", HA_CLUSTER)
    args = build_parser().parse_args(
        ["serve", "--storm-conf", str(path), "--state-dir", str(tmp_path / "state")]
    )
    addresses = resolve(args, explicit_only=True)
    controller = build_controller(args, RoundConfig(), addresses)
    assert controller is not None
    assert controller.nimbus.seeds == (("nimbus1.example.org", 6628), ("nimbus2.example.org", 6628))
    bare = build_parser().parse_args(["serve", "--no-storm-conf"])
    assert build_controller(bare, RoundConfig(), resolve(bare, explicit_only=True)) is None


def test_serve_acts_only_on_a_cluster_it_was_pointed_at(tmp_path, monkeypatch):
    """A storm.yaml or a variable that merely is in serve's environment (make test exports
    STORM_HOME) switches nothing on: no measured costs, no controller."""
    from scheduler_py.cli.operator import build_controller
    from scheduler_py.scheduling.round import RoundConfig

    _write(tmp_path / "conf", HA_CLUSTER)
    monkeypatch.setenv("STORM_HOME", str(tmp_path))
    monkeypatch.setenv("SCHEDULER_PY_NIMBUS", "env-nimbus:6627")
    monkeypatch.setenv("SCHEDULER_PY_ZOOKEEPER", "env-zk:2181")
    args = build_parser().parse_args(["serve", "--state-dir", str(tmp_path / "state")])
    addresses = resolve(args, explicit_only=True)
    assert addresses.zookeeper is None and addresses.nimbus == ()
    assert addresses.monitor_root == "/scheduler-py"
    assert build_controller(args, RoundConfig(), addresses) is None
    named = build_parser().parse_args(["serve", "--storm-conf", str(tmp_path / "conf")])
    assert resolve(named, explicit_only=True).zookeeper.startswith("zk1.example.org:2182")
    serve_help = build_parser()._subparsers._group_actions[0].choices["serve"].format_help()
    assert "read only when given" in " ".join(serve_help.split())


def test_a_command_given_a_malformed_storm_yaml_exits_with_the_configuration_status(
    tmp_path, capsys
):
    path = _write(tmp_path, "nimbus.seeds: nimbus1\n")
    status = main(["metrics", "wordcount", "--storm-conf", str(path)])
    assert status == exit_codes.CONFIG == 78
    error = capsys.readouterr().err
    assert error.startswith("scheduler-py metrics: ") and str(path) in error
    assert "nimbus.seeds must be" in error


def test_an_unreachable_nimbus_from_storm_yaml_is_the_unavailable_status(tmp_path, capsys, caplog):
    with socket.socket() as probe:  # two closed ports on this host: no Nimbus answers
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    path = _write(tmp_path, f"nimbus.seeds: [127.0.0.1, localhost]\nnimbus.thrift.port: {closed}\n")
    with caplog.at_level(logging.INFO):
        status = main(["metrics", "wordcount", "--storm-conf", str(path)])
    assert status == exit_codes.UNAVAILABLE == 69
    error = capsys.readouterr().err
    assert f"127.0.0.1:{closed}" in error and f"localhost:{closed}" in error
    assert "nimbus.seeds" in error
