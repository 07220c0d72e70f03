"""``scheduler-py bench NAME --set KEY=VALUE``: durations in the CLI's one syntax
(scheduler_py/config/durations.py) and a clear error for a value a benchmark cannot use
(scheduler_py/bench/registry.py)."""

from __future__ import annotations

import pytest

from scheduler_py.bench import cli
from scheduler_py.bench.local_cluster import Timing
from scheduler_py.bench.registry import BenchOptions, SettingError, seconds_setting


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
