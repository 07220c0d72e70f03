"""scheduler_py.devtools.jvm_topologies without a cluster: the ``storm jar`` command line,
how conf values are spelled for ``-c``, when the jar counts as stale, and the errors.
The cluster test is tests/cluster/test_jvm_topologies.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scheduler_py.devtools import jvm_topologies as jvm


def test_conf_values_are_json_except_strings():
    assert jvm.conf_option("bench.payload.bytes", 4096) == "bench.payload.bytes=4096"
    assert jvm.conf_option("bench.spout.rate", 2.5) == "bench.spout.rate=2.5"
    assert jvm.conf_option("topology.debug", True) == "topology.debug=true"
    assert jvm.conf_option("topology.auto.task.hooks", []) == "topology.auto.task.hooks=[]"
    assert jvm.conf_option("scheduler.brain.algorithm", "td") == "scheduler.brain.algorithm=td"
    with pytest.raises(ValueError, match="without '='"):
        jvm.conf_option("a=b", 1)


def test_storm_jar_command_puts_options_after_kind_and_name():
    command = jvm.storm_jar_command(
        "star",
        "s1",
        {"bench.parallelism": 3, "topology.workers": 2},
        Path("/storm"),
        Path("/t.jar"),
    )
    assert command == [
        "/storm/bin/storm",
        "jar",
        "/t.jar",
        "io.schedulerpy.topologies.Submit",
        "star",
        "s1",
        "-c",
        "bench.parallelism=3",
        "-c",
        "topology.workers=2",
    ]


def test_an_unknown_kind_is_refused_naming_the_kinds():
    with pytest.raises(ValueError, match=r"expected one of \['wordcount', 'linear', 'diamond'"):
        jvm.storm_jar_command("ring", "r", {}, Path("/storm"))


def test_the_jar_is_stale_when_missing_or_older_than_a_main_source(tmp_path: Path):
    module = tmp_path / "jvm"
    source = module / "src" / "main" / "java" / "A.java"
    test_source = module / "src" / "test" / "java" / "ATest.java"
    jar = module / "target" / "t.jar"
    for path in (module / "pom.xml", source, test_source):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    assert jvm.jar_is_stale(jar, module)
    jar.parent.mkdir()
    jar.write_text("jar")
    os.utime(jar, (2_000_000_000, 2_000_000_000))
    for path in (module / "pom.xml", source, test_source):
        os.utime(path, (1_000_000_000, 1_000_000_000))
    assert not jvm.jar_is_stale(jar, module)
    os.utime(test_source, (2_100_000_000, 2_100_000_000))  # tests do not go into the jar
    assert not jvm.jar_is_stale(jar, module)
    os.utime(source, (2_100_000_000, 2_100_000_000))
    assert jvm.jar_is_stale(jar, module)


def test_submit_without_a_storm_home_says_what_to_do(tmp_path: Path):
    with pytest.raises(jvm.JvmTopologyError, match="run `make storm-home` or set STORM_HOME"):
        jvm.submit("linear", "x", env={"STORM_HOME": str(tmp_path)})
