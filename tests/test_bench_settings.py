"""``scheduler-py bench NAME --set KEY=VALUE``: durations in the CLI's one syntax
(scheduler_py/config/durations.py) and a clear error for a value a benchmark cannot use
(scheduler_py/bench/registry.py)."""

from __future__ import annotations

import pytest

from scheduler_py.bench import cli
from scheduler_py.bench.local_cluster import Timing
from scheduler_py.bench.registry import (
    BenchOptions,
    SettingError,
    seconds_list_setting,
    seconds_setting,
)


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30.0), ("45", 45.0), ("500ms", 0.5), ("2m", 120.0)]
)
def test_durations_take_the_cli_syntax_and_a_bare_number_is_seconds(text, seconds):
    assert seconds_setting({"interval": text}, "interval", 9.0) == seconds


def test_an_absent_setting_is_its_default_and_zero_only_where_allowed():
    assert seconds_setting({}, "warmup", 15) == 15.0
    assert seconds_setting({"warmup": "0"}, "warmup", 15, allow_zero=True) == 0.0
    with pytest.raises(SettingError, match=r"--set interval=: expected a duration > 0"):
        seconds_setting({"interval": "0s"}, "interval", 9.0)


def test_a_bad_duration_names_the_key_what_is_expected_and_what_was_found():
    with pytest.raises(SettingError) as caught:
        seconds_setting({"warmup": "ten"}, "warmup", 9.0)
    assert "--set warmup=" in str(caught.value)
    assert "expected a duration such as 30s" in str(caught.value)
    assert "'ten'" in str(caught.value)


def test_the_cluster_benchmarks_timing_reads_durations():
    timing = Timing(warmup=(1.0, 2.0), interval=(3.0, 4.0), algorithm="td")
    settings = timing.settings(BenchOptions(extra={"warmup": "1m", "interval": "90s"}))
    assert settings["warmup"] == 60.0 and settings["interval"] == 90.0


def test_the_cli_prints_a_setting_error_and_exits_2(capsys):
    status = cli.main(["monitor_overhead", "--set", "hosts=cloud"])
    assert status == 2
    err = capsys.readouterr().err
    assert "monitor_overhead" in err and "--set hosts= expects one of local, emulated" in err


def test_a_list_of_durations_takes_the_same_syntax_item_by_item():
    assert seconds_list_setting({"durations": "200ms, 1s,2"}, "durations", (9.0,)) == (
        0.2,
        1.0,
        2.0,
    )
    assert seconds_list_setting({}, "durations", (0.2, 0.5)) == (0.2, 0.5)
    with pytest.raises(SettingError, match=r"--set durations=: .*found 'soon'"):
        seconds_list_setting({"durations": "1s,soon"}, "durations", (9.0,))


@pytest.mark.parametrize(
    ("benchmark", "key"),
    [
        ("compare", "optimal_time_limit"),
        ("paper002_t3", "optimal_time_limit"),
        ("paper001_albic", "time_limit"),
        ("paper000_throughput", "durations"),
    ],
)
def test_the_solver_time_limits_are_durations_too(benchmark, key, tmp_path, capsys):
    """A bad time limit stops the benchmark before it plans anything, naming the key."""
    status = cli.main([benchmark, "--output-dir", str(tmp_path), "--set", f"{key}=ten"])
    assert status == 2
    err = capsys.readouterr().err
    assert f"error: {benchmark}: --set {key}=: expected a duration" in err, err
