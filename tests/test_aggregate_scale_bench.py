"""``scheduler-py bench aggregate_scale``: its burst measure, and a small real run (ZooKeeper,
Spark) that writes the summary fields docs/monitoring.md ("Monitoring cost") names."""

from __future__ import annotations

import json

import pytest

from scheduler_py.bench import cli
from scheduler_py.bench.aggregate_scale import CpuSampler
from scheduler_py.devtools.zkserver import storm_home


def test_longest_burst_counts_only_uninterrupted_busy_samples():
    sampler = CpuSampler(pid=0, exclude=set())
    # (time s, cumulative CPU s): 1 core for 1.5 s, idle 0.5 s, 0.8 core for 1 s
    sampler.samples = [(0.0, 0.0), (0.5, 0.5), (1.0, 1.0), (1.5, 1.5), (2.0, 1.5), (2.5, 1.9)]
    sampler.samples += [(3.0, 2.3)]
    assert sampler.longest_burst(0.5) == pytest.approx(1.5)
    assert sampler.longest_burst(0.9) == pytest.approx(1.5)
    assert sampler.longest_burst(1.5) == 0.0
    assert sampler.cpu_seconds == pytest.approx(2.3)


@pytest.mark.skipif(storm_home() is None, reason="needs the Storm home's ZooKeeper jars")
def test_small_run_writes_the_summary(tmp_path, capsys):
    code = cli.main(
        [
            "aggregate_scale",
            "--quick",
            "--output-dir",
            str(tmp_path),
            "--set",
            "sizes=10,40",
            "--set",
            "cycles=1",
        ]
    )
    assert code == 0
    result = json.loads((tmp_path / "aggregate_scale.json").read_text())
    sizes = result["summary"]["sizes"]
    assert [s["executors"] for s in sizes] == [10, 40]
    for size in sizes:
        assert size["cpu_s_per_cycle"] > 0 and size["wall_s_per_cycle"] > 0
    # every warm cycle read exactly one new window per worker and aggregated the window
    for entry in result["results"]:
        (cycle,) = entry["cycles"]
        assert cycle["new_windows"] == entry["workers"]
        assert cycle["records_in_window"] == 6 * entry["workers"]
    assert (tmp_path / "aggregate_scale.png").read_bytes()[:4] == b"\x89PNG"
    assert "targets:" in capsys.readouterr().out


def test_this_process_is_sampled_finer_than_proc_ticks():
    import os
    import time

    sampler = CpuSampler(pid=os.getpid(), exclude=set())
    sampler.sample()
    started = time.process_time()
    while time.process_time() - started < 0.002:  # 2 ms of CPU: less than one /proc tick
        pass
    sampler.sample()
    assert sampler.cpu_seconds >= 0.0015
