"""The one duration syntax of every duration flag (``scheduler_py/config/durations.py``)."""

from __future__ import annotations

import pytest

from scheduler_py.cli import build_parser
from scheduler_py.cli.metrics import build_parser as metrics_parser
from scheduler_py.cli.operator import replan_main
from scheduler_py.config.durations import DurationError, format_duration, parse_ms, parse_seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("500ms", 0.5),
        ("2m", 120.0),
        ("1.5h", 5400.0),
        ("90", 90.0),
        (" 2.5 s ", 2.5),
        (".5s", 0.5),
    ],
)
def test_units_and_bare_seconds(text, seconds):
    assert parse_seconds(text) == pytest.approx(seconds)


def test_a_bare_number_keeps_milliseconds_where_a_flag_took_them():
    assert parse_ms("1500", bare_unit="ms") == 1500
    assert parse_ms("2s", bare_unit="ms") == 2000
    assert parse_ms("1500") == 1_500_000


@pytest.mark.parametrize("text", ["", "abc", "-5s", "10 parsecs", "5 min", "1e3", "0s", "0"])
def test_malformed_negative_and_zero_durations_are_refused_with_examples(text):
    with pytest.raises(DurationError, match="expected a duration"):
        parse_seconds(text)


def test_zero_only_where_allowed_and_a_sub_millisecond_value_is_not_rounded_to_zero():
    assert parse_seconds("0", allow_zero=True) == 0.0
    assert parse_ms("0.1ms") == 1


def test_format_is_the_shortest_exact_spelling():
    assert [format_duration(s) for s in (0.5, 90, 300, 7200, 1.5)] == [
        "500ms",
        "90s",
        "5m",
        "2h",
        "1.5s",
    ]
    for seconds in (0.25, 45, 600, 3600):
        assert parse_seconds(format_duration(seconds)) == seconds


def test_serve_round_budget_new_name_and_the_older_millisecond_flag():
    parser = build_parser()
    assert parser.parse_args(["serve"]).round_budget_ms == 1500
    assert parser.parse_args(["serve", "--round-budget", "2s"]).round_budget_ms == 2000
    assert parser.parse_args(["serve", "--round-budget", "1.5"]).round_budget_ms == 1500
    assert parser.parse_args(["serve", "--round-budget-ms", "1200"]).round_budget_ms == 1200
    assert parser.parse_args(["serve", "--round-budget-ms", "3s"]).round_budget_ms == 3000
    assert parser.parse_args(["serve", "--reconfig-check", "1m"]).reconfig_check_secs == 60
    assert parser.parse_args(["serve", "--reconfig-check-secs", "5"]).reconfig_check_secs == 5
    assert parser.parse_args(
        ["plan", "-a", "x", "-i", "-", "--bound-secs", "500ms"]
    ).bound_secs == (0.5)


def test_the_older_names_are_hidden_from_help():
    serve = build_parser()._subparsers._group_actions[0].choices["serve"].format_help()
    assert "--round-budget DURATION" in serve and "--reconfig-check DURATION" in serve
    assert "--round-budget-ms" not in serve and "--reconfig-check-secs" not in serve


def test_aggregate_metrics_and_replan_durations(capsys):
    args = build_parser().parse_args(
        ["aggregate", "--every", "500ms", "--window", "2m", "--zookeeper-timeout", "15"]
    )
    assert (args.every, args.window, args.zookeeper_timeout) == (500, 120_000, 15_000)
    assert metrics_parser().parse_args(["wc", "--wait", "2m"]).wait == 120.0
    assert metrics_parser().parse_args(["wc", "--wait", "0"]).wait == 0.0
    with pytest.raises(SystemExit) as usage:
        replan_main(["wc", "--timeout", "soon"])
    assert usage.value.code == 2
    assert "expected a duration" in capsys.readouterr().err


def test_a_bad_duration_is_a_usage_error_naming_the_flag(capsys):
    with pytest.raises(SystemExit) as usage:
        build_parser().parse_args(["aggregate", "--every", "often"])
    assert usage.value.code == 2
    error = capsys.readouterr().err
    assert "--every" in error and "expected a duration such as 30s" in error
