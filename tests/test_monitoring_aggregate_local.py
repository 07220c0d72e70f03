"""The aggregation on the driver (``monitoring/aggregate_local.py``) gives what the Spark query
(``monitoring/aggregate.py``) gives: every table row for row on the hand-built scenarios of
``test_monitoring_aggregate.py``, on counts-mode records and on random records (duplicates,
moved executors, unknown sources and destinations); and the job picks the engine by input
size. Both engines against the recorded golden documents: ``test_monitoring_golden.py``."""

from __future__ import annotations

import math
import random

import pytest

from scheduler_py.monitoring.aggregate import aggregate_frames, aggregate_rows, frames_from_rows
from scheduler_py.monitoring.aggregate_local import aggregate_local, input_rows
from scheduler_py.monitoring.documents import Tables, parse_windows
from scheduler_py.monitoring.job import DRIVER_MAX_ROWS, JobConfig
from scheduler_py.monitoring.records import (
    ExecutorSample,
    FlatRecords,
    TrafficSample,
    WindowRecord,
    flatten,
)
from scheduler_py.monitoring.spark import spark_session
from scheduler_py.monitoring.synthetic_counts import SHAPES, Layout, chain, simulate
from scheduler_py.monitoring.traffic_source import estimate_topologies
from tests import test_monitoring_aggregate as scenarios_module

NOW = 1_800_000_000_000
WINDOW = 60_000
TABLES = ("workers", "executors", "pairs", "components", "edges")


def _canonical(row: dict) -> tuple:
    """A sort key of a row from its non-float fields (floats may differ in the last bits)."""
    return tuple(
        (key, repr(value)) for key, value in sorted(row.items()) if not isinstance(value, float)
    )


def _differences(spark_tables: Tables, local_tables: Tables) -> list[str]:
    problems = []
    for name in TABLES:
        expected = sorted(getattr(spark_tables, name), key=_canonical)
        actual = sorted(getattr(local_tables, name), key=_canonical)
        if len(expected) != len(actual):
            problems.append(f"{name}: {len(expected)} rows from Spark, {len(actual)} local")
            continue
        for e, a in zip(expected, actual, strict=True):
            if set(e) != set(a):
                problems.append(f"{name}: columns {sorted(set(e) ^ set(a))}")
                continue
            for key in e:
                x, y = e[key], a[key]
                if isinstance(x, float) and isinstance(y, float):
                    if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9):
                        problems.append(f"{name}.{key}: {x!r} from Spark, {y!r} local ({e})")
                elif x != y:
                    problems.append(f"{name}.{key}: {x!r} from Spark, {y!r} local ({e})")
    return problems


def both(flat: FlatRecords, now: int = NOW, window: int = WINDOW) -> tuple[Tables, Tables]:
    """Every table as Spark's query computes it (all five frames collected, not
    ``collect``'s driver-side ``components`` and ``edges``), and as the driver does; the job's
    Spark path (``aggregate_rows``) must give the same tables."""
    session = spark_session("local[2]")
    frames = aggregate_frames(frames_from_rows(session, flat, now - window))
    spark = Tables()
    for name in TABLES:
        getattr(spark, name).extend(
            r.asDict(recursive=True) for r in getattr(frames, name).collect()
        )
    problems = _differences(spark, aggregate_rows(session, flat, now, window))
    assert not problems, "the job's Spark path: " + "\n".join(problems[:20])
    return spark, aggregate_local(flat, now - window)


def test_hand_built_scenarios_row_for_row():
    parsed = parse_windows(scenarios_module.scenarios())
    flat = flatten(parsed.records)
    spark, local = both(flat, scenarios_module.NOW, scenarios_module.WINDOW)
    assert spark.pairs and spark.components and spark.workers
    problems = _differences(spark, local)
    assert not problems, "\n".join(problems[:20])


def test_counts_mode_records_row_for_row():
    counted = simulate(
        SHAPES["wordcount"], Layout(3, 1), NOW, windows=8, mode="counts", topology_id="wc"
    )
    exact = simulate(SHAPES["star"], Layout(3, 2), NOW, mode="exact", topology_id="star")
    big = simulate(chain(100), Layout(12, 3), NOW, windows=8, mode="counts", topology_id="c100")
    records = counted.records + exact.records + big.records + counted.records[:3]
    flat = flatten(records, traffic_after_ms=NOW - WINDOW)
    for estimated in estimate_topologies(records, NOW - WINDOW).values():
        flat.traffic.extend(estimated.rows)
    spark, local = both(flat)
    assert len(spark.pairs) > 500
    problems = _differences(spark, local)
    assert not problems, "\n".join(problems[:20])


def _random_records(seed: int) -> list[WindowRecord]:
    """Two topologies, three workers each, 12 windows around the cut: duplicates (another
    ``seq``, or the same), an executor moving between workers, traffic from tasks the record
    does not list and to tasks nobody lists, a short-lived worker."""
    rng = random.Random(seed)
    records = []
    for topology in ("ta", "tb"):
        ranges = [(1, 1, "spout"), (2, 3, "split"), (4, 4, "split"), (5, 7, "count"), (8, 8, "x")]
        owner = {r: rng.randrange(3) for r in ranges}
        moved = rng.choice(ranges)
        for worker in range(3):
            first = rng.choice([0, 0, 0, 8])
            for window in range(first, 12):
                end = NOW - (11 - window) * 10_000 + rng.choice([0, 0, -3_000])
                listed = [
                    r
                    for r in ranges
                    if (owner[r] if r != moved or window < 6 else (owner[r] + 1) % 3) == worker
                ]
                executors = tuple(
                    ExecutorSample(s, e, c, rng.uniform(0, 500), rng.choice([0.0, 3.5]))
                    for s, e, c in listed
                )
                traffic = tuple(
                    TrafficSample(
                        rng.choice([s for s, _, _ in listed] + [99]),
                        rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 42]),
                        rng.choice(["default", "other"]),
                        float(rng.randrange(1, 1000)),
                        float(rng.randrange(0, 50_000)),
                    )
                    for _ in range(rng.randrange(0, 12) if listed else 0)
                )
                copies = rng.choice([1, 1, 1, 2])
                for copy in range(copies):
                    records.append(
                        WindowRecord(
                            topology_id=topology,
                            supervisor_id=f"sup-{worker % 2}",
                            host=f"host-{worker % 2}",
                            port=6700 + worker,
                            seq=window * 10 + rng.choice([0, copy]),
                            window_start_ms=end - rng.choice([10_000, 7_000]),
                            window_end_ms=end,
                            worker_cpu_ms=rng.uniform(0, 2_000),
                            overhead_cpu_ms=rng.uniform(0, 200),
                            executors=executors,
                            traffic=traffic,
                            truncated_pairs=rng.choice([0, 0, 3]),
                        )
                    )
    rng.shuffle(records)
    return records


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("traffic", ["all records", "in-window records only"])
def test_random_records_row_for_row(seed, traffic):
    records = _random_records(seed)
    after = NOW - WINDOW if traffic == "in-window records only" else None
    flat = flatten(records, traffic_after_ms=after)
    spark, local = both(flat)
    assert spark.pairs and any(p["src_component"] == "?" for p in spark.pairs)
    assert any(p["dst_component"] == "?" for p in spark.pairs)
    problems = _differences(spark, local)
    assert not problems, "\n".join(problems[:20])


def test_the_comparison_sees_a_difference():
    flat = flatten(_random_records(4))
    spark, local = both(flat)
    local.pairs[0] = dict(local.pairs[0], tuples_per_s=local.pairs[0]["tuples_per_s"] + 1e-3)
    local.workers.pop()
    problems = _differences(spark, local)
    assert any(p.startswith("pairs.tuples_per_s") for p in problems)
    assert any(p.startswith("workers:") for p in problems)


def test_no_records_gives_empty_tables():
    assert aggregate_local(FlatRecords(), NOW - WINDOW) == Tables()


def test_engine_by_input_size(tmp_path):
    flat = flatten(_random_records(5))
    assert input_rows(flat) == len(flat.records) + len(flat.executors) + len(flat.traffic)
    auto = JobConfig()
    assert not auto.uses_spark(input_rows(flat))
    assert not auto.uses_spark(DRIVER_MAX_ROWS) and auto.uses_spark(DRIVER_MAX_ROWS + 1)
    assert JobConfig(parquet=tmp_path).uses_spark(10)  # the Parquet history needs Spark
    assert JobConfig(engine="spark").uses_spark(10)
    assert not JobConfig(engine="driver").uses_spark(10 * DRIVER_MAX_ROWS)
    with pytest.raises(ValueError, match="engine must be one of"):
        JobConfig(engine="pandas")
    with pytest.raises(ValueError, match="needs Spark"):
        JobConfig(engine="driver", parquet=tmp_path)
