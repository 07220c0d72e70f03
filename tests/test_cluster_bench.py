"""``scheduler-py bench cluster`` (docs/evaluation.md): registration, scheduler and topology
names, the interleaved run order, the brain's predicted traffic from a plan log, the summary
rows with the issue's field names, the targets. No cluster is started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_py.bench import cli, cluster_report
from scheduler_py.bench import cluster_adaptive as adaptive_bench
from scheduler_py.bench.cluster import _settings, executor_placement
from scheduler_py.bench.cluster_runs import (
    BRAIN_SCHEDULER,
    DEFAULT_SCHEDULER,
    RAS_SCHEDULER,
    SUMMARY_FIELDS,
    RunKey,
    brain_plan,
    cluster_starts,
    cpu_target,
    network_conf,
    network_target,
    parse_bool_list,
    payload_volume,
    predicted_traffic,
    run_order,
    scheduler_spec,
    summarise,
    topology_spec,
)
from scheduler_py.bench.registry import BenchOptions, benchmarks
from scheduler_py.config import keys

REPO = Path(__file__).resolve().parents[1]


def test_registered_under_its_exact_name() -> None:
    known = benchmarks()
    assert [info.name for info in cli.resolve("cluster", known)] == ["cluster"]


def test_scheduler_names() -> None:
    default = scheduler_spec("default")
    assert (default.cluster_class, default.storm_scheduler) == ("default", DEFAULT_SCHEDULER)
    assert not default.topology_conf
    generic = scheduler_spec("ras-generic")
    assert generic.storm_scheduler == RAS_SCHEDULER
    assert generic.topology_conf["topology.scheduler.strategy"].endswith(
        ".GenericResourceAwareStrategy"
    )
    assert (
        scheduler_spec("ras-default")
        .topology_conf["topology.scheduler.strategy"]
        .endswith(".DefaultResourceAwareStrategy")
    )
    brain = scheduler_spec("brain:tdls")
    assert brain.brain and brain.storm_scheduler == BRAIN_SCHEDULER
    assert brain.topology_conf == {"scheduler.brain.algorithm": "tdls"}
    adaptive = scheduler_spec("brain:adaptive")
    assert adaptive.adaptive and adaptive.brain and not adaptive.topology_conf
    assert not adaptive.monitored and adaptive.follows_replans
    monitored = scheduler_spec("brain:monitored")
    assert monitored.monitored and monitored.brain and monitored.follows_replans
    assert not monitored.topology_conf, "nothing set per topology: the service's default"
    assert not scheduler_spec("brain:default").follows_replans
    with pytest.raises(ValueError, match="expected default, ras-default"):
        scheduler_spec("even")


def test_the_monitored_brain_runs_the_monitor_the_install_guide_switches_on() -> None:
    """``brain:monitored`` must measure what docs/install.md step 5 installs: the same
    reporter class, present in the shim jar's sources and in deploy/monitor.yaml, and no
    per-tuple hook; its aggregation is the guide's ``--every 30s``."""
    (reporter,) = adaptive_bench.MONITORED_CONF["topology.metrics.reporters"]
    name = reporter["class"]
    source = REPO / "storm_plugin/src/main/java" / (name.replace(".", "/") + ".java")
    assert source.is_file(), f"{name} is not a class of the shim jar ({source})"
    assert f'class: "{name}"' in (REPO / "docs/install.md").read_text()
    assert f'class: "{name}"' in (REPO / "deploy/monitor.yaml").read_text()
    assert not any("hook" in key for key in adaptive_bench.MONITORED_CONF)
    assert "--every 30s" in (REPO / "docs/install.md").read_text()
    assert adaptive_bench.MONITORED_AGGREGATE_EVERY == "30s"
    # the deadline leaves room for the shipped warm-up before the first re-plan
    warmup = keys.by_name()["scheduler.reconfig.warmup.secs"].default
    assert 2 * float(warmup) < adaptive_bench.MONITORED_DEADLINE_S


def test_link_scoring_algorithms_are_told_the_emulated_networks_rack_link() -> None:
    links = network_conf(scheduler_spec("brain:links"), 100.0, 50.0)
    assert links == {"scheduler.brain.params": {"rack_link": 0.5}}
    assert network_conf(scheduler_spec("brain:locality"), 100.0, 25.0) == {
        "scheduler.brain.params": {"rack_link": 0.25}
    }
    assert network_conf(scheduler_spec("brain:tdls"), 100.0, 50.0) == {}
    assert network_conf(scheduler_spec("ras-default"), 100.0, 50.0) == {}
    assert network_conf(scheduler_spec("brain:links"), 0.0, 50.0) == {}


def test_executor_placement_lists_each_components_slots_in_task_order() -> None:
    from scheduler_py.nimbus.client import ExecutorRun

    runs = [
        ExecutorRun("b", 4, 4, "h2", 6700, 0, 0),
        ExecutorRun("a", 2, 2, "h1", 6700, 0, 0),
        ExecutorRun("b", 3, 3, "h1", 6700, 0, 0),
    ]
    assert executor_placement(runs) == {"a": ["h1:6700"], "b": ["h1:6700", "h2:6700"]}


def test_topology_names() -> None:
    linear = topology_spec("linear")
    assert (linear.jvm_kind, linear.kind, linear.spouts) == ("linear", "network", ("word",))
    assert (
        linear.conf["bench.payload.bytes"] > topology_spec("star-cpu").conf["bench.payload.bytes"]
    )
    star = topology_spec("star-cpu")
    assert (star.kind, star.spouts) == ("cpu", ("spout_0", "spout_1"))
    assert star.conf["bench.cpu.micros"] > 0
    assert topology_spec("wordcount").kind == "cpu"
    for bad in ("ring", "linear-gpu", "wordcount-cpu"):
        with pytest.raises(ValueError, match="unknown topology"):
            topology_spec(bad)


def test_quick_order_alternates_the_classes() -> None:
    order = run_order(["linear"], ["default", "ras-default", "brain:tdls"], [True], 2)
    assert [k.scheduler for k in order] == [
        "default", "ras-default", "brain:tdls", "brain:tdls", "ras-default", "default",
    ]  # fmt: skip
    assert [k.repetition for k in order] == [0, 0, 0, 1, 1, 1]
    assert cluster_starts(order) == 5
    cycle = run_order(
        ["linear"], ["default", "ras-default", "brain:tdls"], [True], 2, serpentine=False
    )
    assert [k.scheduler for k in cycle][:4] == ["default", "ras-default", "brain:tdls", "default"]
    assert cluster_starts(cycle) == 6


def test_order_groups_a_class_and_covers_every_combination() -> None:
    schedulers = ["brain:td", "default", "ras-generic", "ras-default", "brain:tdls"]
    order = run_order(["linear", "star-cpu"], schedulers, [True, False], 3)
    assert len(order) == 2 * 5 * 2 * 3
    assert len({(k.repetition, *k.group) for k in order}) == len(order)
    assert cluster_starts(order) == 3 + 2 + 2  # serpentine: a class continues across reps
    first = order[:4]
    assert [(k.topology, k.scheduler, k.loadaware) for k in first] == [
        ("linear", "default", True),
        ("linear", "default", False),
        ("star-cpu", "default", True),
        ("star-cpu", "default", False),
    ]
    with pytest.raises(ValueError, match="repetitions"):
        run_order(["linear"], ["default"], [True], 0)


def test_parse_bool_list() -> None:
    assert parse_bool_list("both") == [True, False]
    assert parse_bool_list("off, on") == [False, True]
    with pytest.raises(ValueError, match="on, off or both"):
        parse_bool_list("maybe")


def test_settings_quick_and_unknown_keys() -> None:
    quick = _settings(BenchOptions(quick=True))
    assert quick["topologies"] == ["linear"]
    assert quick["schedulers"] == ["default", "ras-default", "brain:locality"]
    assert quick["repetitions"] == 2 and quick["loadaware"] == [True]
    full = _settings(BenchOptions(extra={"schedulers": "default,brain:t3", "emu_hosts": "4"}))
    assert full["schedulers"] == ["default", "brain:t3"] and full["emu_hosts"] == "4"
    assert full["repetitions"] >= 3 and full["loadaware"] == [True, False]
    with pytest.raises(ValueError, match="unknown --set key"):
        _settings(BenchOptions(extra={"topology": "linear"}))
    with pytest.raises(ValueError, match="emulation expects"):
        _settings(BenchOptions(extra={"emulation": "maybe"}))


def test_brain_plan_takes_the_last_place_entry(tmp_path: Path) -> None:
    log = tmp_path / "brain-plans.jsonl"
    entries = [
        {"topology_id": "t-1", "decision": "PLACE", "summary": {"internode_traffic": 1.0}},
        {"topology_id": "t-2", "decision": "PLACE", "summary": {"internode_traffic": 9.0}},
        {"topology_id": "t-1", "decision": "KEEP", "summary": {}},
        {"topology_id": "t-1", "decision": "PLACE", "summary": {"internode_traffic": 2.0}},
    ]
    log.write_text("\n".join(json.dumps(e) for e in entries) + "\nnot json\n")
    assert brain_plan(log, "t-1")["summary"]["internode_traffic"] == 2.0
    assert brain_plan(log, "t-3") is None
    with log.open("a") as out:
        out.write(json.dumps({"topology_id": "t-3", "decision": "LEAVE_TO_STORM", "reason": "x"}))
    left = brain_plan(log, "t-3")
    assert left["decision"] == "LEAVE_TO_STORM"
    result = predicted_traffic(left, 30.0)
    assert result["brain_decision"] == "LEAVE_TO_STORM" and result["brain_reason"] == "x"
    assert result["predicted_inter_host_bytes"] is None
    assert brain_plan(tmp_path / "missing.jsonl", "t-1") is None


def test_predicted_bytes_only_from_measured_bytes() -> None:
    measured = {
        "decision": "PLACE",
        "summary": {
            "internode_traffic": 1000.0,
            "costs": "measured (6 windows, 60 s, bytes/s)",
            "nodes_used": 2,
        },
    }
    assert predicted_traffic(measured, 30.0)["predicted_inter_host_bytes"] == 30_000.0
    declared = {
        "decision": "PLACE",
        "summary": {"internode_traffic": 12.0, "costs": "declared (no aggregate)"},
    }
    result = predicted_traffic(declared, 30.0)
    assert result["predicted_inter_host_bytes"] is None
    assert result["predicted_internode_traffic"] == 12.0
    assert "model units" in result["predicted_note"]
    assert predicted_traffic(None, 30.0)["predicted_note"] == "no brain plan"
    collocated = {
        "decision": "PLACE",
        "summary": {"internode_traffic": 0.0, "costs": "declared (no aggregate)"},
    }
    assert predicted_traffic(collocated, 30.0)["predicted_inter_host_bytes"] == 0.0


def test_declared_costs_predict_bytes_from_the_plans_share_and_the_payload_moved() -> None:
    declared = {
        "decision": "PLACE",
        "summary": {
            "internode_traffic": 1.8,  # acking streams included: not payload
            "internode_traffic_loadaware": 0.8,
            "user_internode_share_loadaware": 1 / 6,
            "user_internode_share_uniform": 1 / 2,
            "total_traffic": 3.3,
            "costs": "declared",
        },
    }
    linear = topology_spec("linear")
    volume = payload_volume(linear, 1000.0)
    assert volume == 1000 * 3 * 8192  # three payload hops per acked tuple
    routed = predicted_traffic(declared, 30.0, loadaware=True, volume_bytes=volume)
    assert routed["predicted_model"] == "load-aware"
    assert routed["predicted_inter_host_bytes"] == pytest.approx(volume / 6)
    uniform = predicted_traffic(declared, 30.0, loadaware=False, volume_bytes=volume)
    assert uniform["predicted_model"] == "uniform"
    assert uniform["predicted_inter_host_bytes"] == pytest.approx(volume / 2)
    assert payload_volume(topology_spec("wordcount"), 1000.0) is None


def test_model_check_flags_predictions_off_by_more_than_20_percent() -> None:
    rows = [
        {"topology": "linear", "scheduler": "brain:locality", "loadaware": True,
         "inter_host_bytes_median": 110.0, "predicted_inter_host_bytes": 100.0},
        {"topology": "linear", "scheduler": "brain:tdls", "loadaware": True,
         "inter_host_bytes_median": 200.0, "predicted_inter_host_bytes": 100.0},
        {"topology": "linear", "scheduler": "brain:td", "loadaware": True,
         "inter_host_bytes_median": None, "predicted_inter_host_bytes": 100.0},
        {"topology": "linear", "scheduler": "default", "loadaware": True,
         "inter_host_bytes_median": 1.0, "predicted_inter_host_bytes": None},
    ]  # fmt: skip
    checks = cluster_report.model_check(rows)
    assert [c["within_20pct"] for c in checks] == [True, False, None]


def run(scheduler: str, throughput: float, p99: float, hosts: int, **extra) -> dict:
    return {
        "topology": extra.pop("topology", "linear"),
        "kind": extra.pop("kind", "network"),
        "scheduler": scheduler,
        "loadaware": extra.pop("loadaware", True),
        "throughput": throughput,
        "p50_ms": p99 / 4,
        "p99_ms": p99,
        "hosts": hosts,
        "workers": hosts,
        "inter_host_bytes": extra.pop("inter_host_bytes", None),
        **extra,
    }


def test_declared_cpu_fits_six_emulated_hosts_of_a_third_core() -> None:
    executors = {"linear": 8, "diamond": 12, "star": 10}
    for label, count in executors.items():
        for variant in (label, f"{label}-cpu"):
            declared = topology_spec(variant).conf["bench.cpu.load"] * (count + 1)  # + acker
            assert declared <= 6 * 30, variant


def test_summary_rows_have_the_issue_fields() -> None:
    runs = [
        run("default", 100, 50, 3, inter_host_bytes=900),
        run("default", 120, 40, 3, inter_host_bytes=1100),
        run("default", 110, 45, 3, inter_host_bytes=1000),
        run("brain:tdls", 200, 20, 1, predicted_inter_host_bytes=5.0),
        run("brain:tdls", 0, 0, 0, error="TimeoutError: spouts"),
    ]
    rows = summarise(runs)
    assert [r["scheduler"] for r in rows] == ["default", "brain:tdls"]
    for row in rows:
        assert set(SUMMARY_FIELDS) <= set(row)
    default, brain = rows
    assert default["runs"] == 3 and default["throughput_median"] == 110
    assert default["throughput_range"] == (100, 120)
    assert default["p99_ms_median"] == 45 and default["inter_host_bytes_median"] == 1000
    assert default["hosts_median"] == 3 and default["kind"] == "network"
    assert brain["runs"] == 1 and brain["failed_runs"] == 1
    assert brain["throughput_median"] == 200 and brain["predicted_inter_host_bytes"] == 5.0
    assert brain["inter_host_bytes_median"] is None
    left = summarise([run("brain:td", 50, 9, 3, brain_decision="LEAVE_TO_STORM")])
    assert left[0]["left_to_storm_runs"] == 1


def test_a_run_whose_placement_moved_while_measured_is_not_in_the_medians() -> None:
    """The ninth set's run 4: a re-plan's stage inside the interval measured 199/s of no one
    placement; the row's median is of the runs that held."""
    rows = summarise(
        [
            run("brain:monitored", 635, 50, 6, placement_held=True),
            run("brain:monitored", 199, 90, 6, placement_held=False),
            run("brain:monitored", 427, 60, 4),  # recorded before placement_held existed
        ]
    )
    (row,) = rows
    assert row["runs"] == 2 and row["moved_runs"] == 1 and row["failed_runs"] == 0
    assert row["throughput_median"] == 531 and row["throughput_range"] == (427, 635)
    assert row["p99_ms_median"] == 55


def test_network_target() -> None:
    rows = summarise(
        [
            run("default", 100, 50, 3),
            run("ras-default", 115, 40, 2),
            run("ras-generic", 120, 45, 2),
            run("brain:td", 131, 39, 1),
            run("brain:tdls", 140, 44, 1),
        ]
    )
    passed, detail = network_target(rows, "linear", True)
    # best brain tdls: 1.40× default, 1.17× the better RAS (generic), p99 44 <= min(50, 45)
    assert passed is True and "brain:tdls 1.40× default, 1.17× ras-generic" in detail
    slower = summarise(
        [run("default", 100, 50, 3), run("ras-default", 120, 40, 2), run("brain:tdls", 140, 44, 1)]
    )
    assert network_target(slower, "linear", True)[0] is False  # p99 44 > RAS's 40
    assert network_target(rows, "linear", False)[0] is None


def test_network_target_against_default_over_every_supervisor_order() -> None:
    # two instances drew the best order (100/s); over every order the median is 70/s
    rows = summarise(
        [
            run("default", 100, 50, 3),
            run("ras-default", 80, 60, 2),
            run("brain:throughput", 98, 49, 1),
        ]
    )
    passed, detail = network_target(rows, "linear", True)
    assert passed is False and "0.98× default" in detail  # measured instances alone
    passed, detail = network_target(rows, "linear", True, default_over_orders=70.0)
    assert passed is True, detail
    assert "1.40× default" in detail and "its measured instances 100/s, 0.98×" in detail
    assert network_target(rows, "linear", True, default_over_orders=80.0)[0] is False  # 1.23×


def test_cpu_target() -> None:
    rows = summarise(
        [
            run("ras-default", 100, 10, 2, kind="cpu"),
            run("brain:tdls", 100, 10, 2, kind="cpu"),
            run("brain:td", 90, 10, 1, kind="cpu"),
        ]
    )
    passed, detail = cpu_target(rows, "linear", True)
    assert passed is True and "brain:tdls 2 host(s)" in detail
    fewer = summarise([run("ras-default", 100, 10, 1), run("brain:tdls", 120, 10, 2)])
    assert cpu_target(fewer, "linear", True)[0] is False
    # the fastest brain algorithm uses more hosts; a slower one fits RAS's and beats it
    mixed = summarise(
        [
            run("ras-default", 100, 10, 3),
            run("brain:locality", 130, 10, 4),
            run("brain:rstorm", 110, 10, 3),
        ]
    )
    passed, detail = cpu_target(mixed, "linear", True)
    assert passed is True and detail.startswith("brain:rstorm 3 host(s) at 110/s")


def test_rows_measured_at_different_times_after_the_first_acks_are_not_compared() -> None:
    # brain:monitored waits for its re-plan (330 s), RAS only the warm-up (40 s): the
    # topology's rate was still rising, so neither target compares them
    runs = [
        run("default", 100, 50, 3, measured_from_s=40.0),
        run("ras-default", 100, 50, 3, kind="cpu", measured_from_s=41.0),
        run("brain:monitored", 120, 40, 3, kind="cpu", measured_from_s=330.0),
    ]
    rows = summarise(runs)
    assert rows[2]["measured_from_s_median"] == 330.0
    passed, detail = cpu_target(rows, "linear", True)
    assert passed is None
    assert "brain:monitored measured from 330 s" in detail and "--set warmup=330" in detail
    assert network_target(rows, "linear", True)[0] is None
    # measured as late as each other: compared
    runs[1] = run("ras-default", 100, 50, 3, kind="cpu", measured_from_s=300.0)
    runs[0] = run("default", 100, 50, 3, measured_from_s=300.0)
    assert cpu_target(summarise(runs), "linear", True)[0] is True
    assert network_target(summarise(runs), "linear", True)[0] is False  # 1.20× default


def test_run_key_group() -> None:
    assert RunKey(1, "star", "default", False).group == ("star", "default", False)


def test_tables_targets_and_plot(tmp_path: Path, capsys) -> None:
    from scheduler_py.bench import report
    from scheduler_py.bench.cluster_report import draw as _draw
    from scheduler_py.bench.cluster_report import tables as _tables
    from scheduler_py.bench.cluster_report import targets as _targets

    runs = [
        run("default", 100, 50, 3),
        run("ras-default", 110, 40, 2),
        run("brain:tdls", 150, 30, 1),
        run("brain:tdls", 160, 35, 1),
        run("default", 90, 60, 3, loadaware=False),
    ]
    rows = summarise(runs)
    settings = {"topologies": ["linear"], "loadaware": [True, False]}
    _tables(rows, settings, emulated=True)
    targets = _targets(rows, runs, settings, emulated=True, quick=True, elapsed=600.0)
    out = capsys.readouterr().out
    assert "linear (network) on the emulated hosts" in out
    assert "1.55×" in out  # brain:tdls median 155 / default 100
    assert "[PASS] linear LA on" in out and "[n/a ] linear LA off" in out
    assert "[PASS] bench cluster --quick < 20 min: 10.0 min" in out
    assert [t["passed"] for t in targets] == [True, None, True]
    _targets(rows, runs, settings, emulated=False, quick=False, elapsed=600.0)
    assert "[PASS]" not in capsys.readouterr().out.split("targets")[1].split("--quick")[0]
    png = report.plot(tmp_path / "cluster.png", lambda axes: _draw(axes, rows, ["linear"]))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_monitor_inter_host_bytes() -> None:
    from scheduler_py.bench.cluster_runs import host_of_task, monitor_inter_host_bytes
    from scheduler_py.monitoring.records import TrafficSample, WindowRecord

    hosts = host_of_task([(1, 2, "a"), (3, 3, "b"), (4, 4, "a")])
    assert hosts == {1: "a", 2: "a", 3: "b", 4: "a"}

    def window(port: int, start: int, traffic: list[tuple[int, int, float]]) -> WindowRecord:
        samples = tuple(TrafficSample(s, d, "default", 1.0, b) for s, d, b in traffic)
        return WindowRecord("t", "s1", "a", port, 1, start, start + 10_000, 0, 0, (), samples)

    records = [
        window(1, 0, [(1, 3, 100.0), (1, 2, 999.0)]),  # 100 cross hosts, 999 stays on a
        window(1, 10_000, [(1, 3, 300.0)]),
        window(2, 10_000, [(3, 4, 50.0)]),  # another worker: 50 B in its one window
        window(1, 20_000, [(1, 3, 7777.0)]),  # ends after the interval: ignored
    ]
    total, used = monitor_inter_host_bytes(records, hosts, 0, 20_000)
    # worker 1: 400 B over 20 s -> 400 over the 20 s interval; worker 2: 5 B/s -> 100 B
    assert used == 3 and total == pytest.approx(500.0)
    assert monitor_inter_host_bytes(records, hosts, 30_000, 40_000) == (None, 0)


def test_with_scheduler_changes_only_that_line() -> None:
    from scheduler_py.bench.cluster import with_scheduler

    text = '# storm.scheduler: "x"\nstorm.scheduler: "old"\nscheduler.brain.port: 9627\n'
    assert with_scheduler(text, RAS_SCHEDULER) == (
        f'# storm.scheduler: "x"\nstorm.scheduler: "{RAS_SCHEDULER}"\nscheduler.brain.port: 9627\n'
    )
    with pytest.raises(RuntimeError, match=r"no storm\.scheduler line"):
        with_scheduler("nimbus.seeds: []\n", RAS_SCHEDULER)


def test_restart_setting() -> None:
    assert _settings(BenchOptions())["restart"] == "nimbus"
    assert _settings(BenchOptions(extra={"restart": "cluster"}))["restart"] == "cluster"
    assert _settings(BenchOptions(extra={"restart": "run"}))["restart"] == "run"
    with pytest.raises(ValueError, match="restart expects"):
        _settings(BenchOptions(extra={"restart": "never"}))


def test_workers_run_on_c2_unless_told_otherwise(tmp_path) -> None:
    from scheduler_py.bench.cluster import _BenchCluster
    from scheduler_py.bench.cluster_runs import scheduler_spec

    assert _settings(BenchOptions())["compiler"] == "c2"
    assert _settings(BenchOptions(extra={"compiler": "C1"}))["compiler"] == "c1"
    with pytest.raises(ValueError, match="compiler expects c2 or c1"):
        _settings(BenchOptions(extra={"compiler": "graal"}))
    spec = scheduler_spec("default")
    c2 = _BenchCluster(tmp_path / "a", "3000", spec, None, False, None)
    assert "TieredStopAtLevel" not in c2.env["STORM_WORKER_CHILDOPTS"]
    c1 = _BenchCluster(tmp_path / "b", "3000", spec, None, False, None, compiler="c1")
    assert "STORM_WORKER_CHILDOPTS" not in c1.env  # cluster-up's own C1 default


def test_adaptive_conf_places_with_even_and_monitors_itself() -> None:
    from scheduler_py.bench import cluster_adaptive as adaptive

    conf = adaptive.topology_conf("locality")
    assert conf["scheduler.brain.algorithm"] == "even"
    assert conf["scheduler.reconfig.algorithm"] == "locality"
    assert conf["topology.auto.task.hooks"] == ["io.schedulerpy.storm.monitor.TrafficHook"]
    assert conf["scheduler.reconfig.replan.on.measured"] is True
    assert _settings(BenchOptions(extra={"adaptive_algorithm": "tdls"}))["adaptive_algorithm"] == (
        "tdls"
    )
    placed = _settings(BenchOptions(extra={"adaptive_placed_by": "td"}))["adaptive_placed_by"]
    assert adaptive.topology_conf("throughput", placed)["scheduler.brain.algorithm"] == "td"


def _busy_brain() -> list[dict]:
    raise TimeoutError("the brain did not answer within the poll")


def test_adaptive_follow_samples_until_the_reconfiguration_has_settled() -> None:
    from scheduler_py.bench.cluster_adaptive import follow, rate_between
    from scheduler_py.bench.cluster_adaptive import reconfigurations as adaptive_reconfigurations

    assert rate_between({"a": (0.0, 0)}, {"a": (10.0, 500)}) == 50.0
    assert rate_between({"a@h1": (0.0, 0)}, {"a@h2": (10.0, 500)}) is None  # it moved
    assert rate_between({"a@h1": (0.0, 900)}, {"a@h1": (10.0, 50)}) is None  # restarted there
    partly = rate_between({"a": (0.0, 0), "b": (0.0, 900)}, {"a": (10.0, 500), "b": (10.0, 5)})
    assert partly is None  # one of two restarted: the sum would undercount
    now = [0.0]
    acked = {"1-1@h1:6700": 0}
    history: list[dict] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds
        for key in acked:
            acked[key] += int(100 * seconds)
        if now[0] >= 30:
            history[:] = [{"id": "r1", "state": "completed", "trigger": "measured"}]
        if now[0] >= 35 and "1-1@h2:6700" not in acked:  # the executor moved
            acked.clear()
            acked["1-1@h2:6700"] = 0

    found = follow(
        lambda: dict(acked), lambda: list(history), 0.0, 20.0, clock=lambda: now[0], sleep=sleep
    )
    assert found["reconfigured_s"] == 30.0
    assert [p["t_s"] for p in found["timeline"]] == [10.0, 20.0, 30.0, 40.0, 50.0]
    rates = [p["throughput"] for p in found["timeline"]]
    assert rates[:3] == [100.0, 100.0, 100.0] and rates[3] is None and rates[4] == 100.0
    assert found["reconfigurations"] == [{"id": "r1", "state": "completed", "trigger": "measured"}]
    # read again after the measured interval: a later stage is in the run's record too
    history.append({"id": "r2", "state": "completed", "trigger": "staged", "plan": {}})
    assert [e["id"] for e in adaptive_reconfigurations(lambda: list(history))] == ["r1", "r2"]
    assert adaptive_reconfigurations(_busy_brain) == []
    # nothing ends: the deadline does
    stuck = follow(
        lambda: {}, lambda: [], now[0], 20.0, deadline_s=60.0, clock=lambda: now[0], sleep=sleep
    )
    assert stuck["reconfigured_s"] is None and len(stuck["timeline"]) == 6


def test_adaptive_follow_waits_for_the_last_stage_of_a_staged_plan() -> None:
    from scheduler_py.bench.cluster_adaptive import _over

    first = {"id": "r1", "state": "completed", "trigger": "measured", "stages": 3}
    assert not _over([first])  # two stages to go
    assert not _over([first, {"id": "r2", "state": "draining", "stages": 2}])
    second = {"id": "r2", "state": "completed", "trigger": "staged", "stages": 2}
    assert not _over([first, second])
    assert _over([first, second, {"id": "r3", "state": "completed", "stages": 1}])
    assert _over([first, second, {"id": "r3", "state": "declined", "stages": 1}])
    # a negative measured gain stops the plan's stages
    assert _over([first, second | {"measured": {"negative": True}}])
    assert not _over([first, second | {"measured": {"negative": False}}])
    # one stage, or an entry from before stages were recorded
    assert _over([{"id": "r1", "state": "completed"}])
    assert _over([{"id": "r1", "state": "declined", "stages": 3}])
    assert not _over([])


def test_adaptive_target_needs_the_rate_to_stay_at_90_percent_within_5_minutes(capsys) -> None:
    from scheduler_py.bench.cluster_adaptive import adaptive_target, time_to_share
    from scheduler_py.bench.cluster_report import targets as _targets

    timeline = [{"t_s": 10, "throughput": 50}, {"t_s": 20, "throughput": 95}]
    timeline += [{"t_s": 30, "throughput": 80}, {"t_s": 40, "throughput": 92}]
    assert time_to_share(timeline, 100) == 40
    assert time_to_share(timeline[:3], 100) is None

    def adaptive(final: float, reached_at: float) -> dict:
        points = [{"t_s": 10.0, "throughput": 40.0}, {"t_s": reached_at, "throughput": final}]
        return run("brain:adaptive", final, 30, 2, timeline=points, measured_end_s=400.0)

    runs = [run("brain:locality", 100, 30, 2), run("brain:locality", 100, 30, 2)]
    runs += [adaptive(95, 200), adaptive(97, 250), adaptive(60, 100)]
    rows = summarise(runs)
    passed, detail = adaptive_target(rows, runs, "linear", True)
    assert passed is True and "from 250 s" in detail and "never" in detail
    assert "adaptive after 95/s (median)" in detail
    slow = [*runs[:2], adaptive(95, 320), adaptive(97, 350)]
    assert adaptive_target(summarise(slow), slow, "linear", True)[0] is False
    # the best *static* placement is the reference, never the adaptive run itself
    from scheduler_py.bench.cluster_runs import best_brain

    assert best_brain(rows, "linear", True)["scheduler"] == "brain:locality"
    settings = {"topologies": ["linear"], "loadaware": [True]}
    found = _targets(rows, runs, settings, emulated=True, quick=False, elapsed=60.0)
    assert any("adaptive path" in t["target"] and t["passed"] for t in found)


def test_link_model_check_prints_each_load_aware_off_run(capsys) -> None:
    from scheduler_py.bench.cluster_report import link_model_check

    model = {
        "busiest_link": 1.5,
        "max_share_error": 0.04,
        "busiest_sender_predicted": "h2",
        "busiest_sender_measured": "h1",
    }
    runs = [
        {"index": 1, "topology": "linear", "scheduler": "brain:links", "link_model": model},
        {"index": 2, "topology": "linear", "scheduler": "default", "link_model": {"note": "x"}},
        {"index": 3, "topology": "linear", "scheduler": "default"},  # load-aware on: no check
    ]
    lines = link_model_check(runs)
    out = capsys.readouterr().out
    assert "run 1 linear brain:links: busiest link 1.50" in out and "(differs)" in out
    assert "largest share error 4%" in out and "run 2 linear default: n/a (x)" in out
    assert lines == [
        {"index": 1, "max_share_error": 0.04, "busiest_sender_agrees": False},
        {"index": 2, "max_share_error": None},
    ]
    assert link_model_check(runs[2:]) == []


def test_a_kept_log_is_the_end_of_a_long_one(tmp_path: Path) -> None:
    from scheduler_py.bench.local_cluster import _copy_tail

    source = tmp_path / "aggregate-3.log"
    source.write_bytes(b"a" * 10 + b"the end")
    kept = _copy_tail(source, tmp_path / "kept.log", 7)
    assert kept.read_bytes() == b"the end"
    assert _copy_tail(source, tmp_path / "whole.log", 100).read_bytes() == source.read_bytes()


def test_a_brain_runs_logs_are_kept_in_the_output_directory(tmp_path: Path) -> None:
    """What ``bench cluster`` copies after a brain run, on the cluster class it runs (the
    session once stopped here: the method was on another class)."""
    from scheduler_py.bench.cluster import _BenchCluster, _keep_run_logs
    from scheduler_py.bench.registry import BenchOptions

    directory = tmp_path / "cluster"
    cluster = _BenchCluster(directory, "3000", scheduler_spec("brain:monitored"), None, True, None)
    state = tmp_path / "brain-state"
    cluster.env["BRAIN_STATE_DIR"] = str(state)
    (directory / "logs").mkdir(parents=True)
    (directory / "logs" / "brain.log").write_text("declined: gain too small\n")
    (directory / "logs" / "brain-plans.jsonl").write_text("{}\n")
    (state / "history").mkdir(parents=True)
    (state / "history" / "bc6-linear-cpu.jsonl").write_text("{}\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "aggregate-6.log").write_text("aggregate written\n")
    options = BenchOptions(output_dir=tmp_path / "out")
    kept = _keep_run_logs(cluster, options, 6, scratch)
    assert kept == str(tmp_path / "out" / "cluster-logs" / "run-6")
    names = sorted(p.name for p in Path(kept).iterdir())
    assert names == ["aggregate-6.log", "bc6-linear-cpu.jsonl", "brain-plans.jsonl", "brain.log"]
    assert _keep_run_logs(cluster, options, 7, tmp_path / "missing") is not None


def test_the_steady_warm_up_of_a_replanned_run_counts_from_the_replans_end() -> None:
    from scheduler_py.bench.cluster import warmup_start

    assert warmup_start(100.0, {"reconfigured_s": 370.0}) == 470.0
    assert warmup_start(100.0, {"reconfigured_s": None}) == 100.0  # not over by its deadline
    assert warmup_start(100.0, {}) == 100.0  # a run that follows no re-plan
