"""How far the throughput model shifts a load-aware route off a saturated host, fitted on the
recorded runs (``scheduler_py/model/throughput.py``, ``SHIFT_FACTOR`` and ``MAX_SHIFTS``).

Every recorded ``bench cluster`` run the calibration reads (``scheduler_py/bench/
cluster_calibration.py``) is predicted once per (steps, factor) pair; the table gives, for the
CPU-bound runs measured at their levelled-off rate, the median and largest |error| and how
many are within ±15 %, with the Star-CPU errors per placement (the runs that set the
constants), and the same for the network-bound runs (the shift only acts while a host's CPU is
the bottleneck, so they do not move). Run from the repository's root:

    .venv/bin/python docs/results/throughput-calibration/shift_grid.py > shift_grid.txt
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import scheduler_py.model.throughput as model
from scheduler_py.bench.cluster_calibration import Sample, all_samples

FACTORS = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85)
STEPS = (0, 1, 2, 3, 4, 6)


def errors(samples: Sequence[Sample]) -> list[float]:
    return [
        model.throughput(s.problem, s.placement, s.inputs).rate / s.measured - 1.0 for s in samples
    ]


def summary(values: Sequence[float]) -> str:
    magnitudes = [abs(v) for v in values]
    within = sum(m <= 0.15 for m in magnitudes)
    return (
        f"{statistics.median(magnitudes):6.1%} {max(magnitudes):6.1%} "
        f"{within:3d}/{len(magnitudes):<3d}"
    )


def star_errors(samples: Sequence[Sample]) -> str:
    """The Star-CPU errors, one per distinct (scheduler, placement), rounded to a percent."""
    seen: dict[tuple, list[float]] = {}
    for sample, error in zip(samples, errors(samples), strict=True):
        if sample.topology != "star-cpu":
            continue
        key = (sample.scheduler, tuple(sorted(sample.placement.node_of.items())))
        seen.setdefault(key, []).append(error)
    parts = sorted(
        f"{scheduler.split(':')[0][:5]} {statistics.median(found):+.0%}"
        for (scheduler, _), found in seen.items()
    )
    return ", ".join(parts)


def main() -> None:
    samples = all_samples()
    levelled = [s for s in samples if s.kind == "cpu" and s.levelled_off]
    network = [s for s in samples if s.kind != "cpu"]
    print(f"{len(levelled)} CPU-bound runs measured levelled off, {len(network)} network-bound")
    print("steps factor floor | CPU-bound: median largest within | network-bound | Star-CPU")
    for factor in FACTORS:
        for steps in STEPS:
            model.SHIFT_FACTOR, model.MAX_SHIFTS = factor, steps
            print(
                f"{steps:5d} {factor:6.2f} {factor**steps:5.2f} | {summary(errors(levelled))} |"
                f" {summary(errors(network))} | {star_errors(levelled)}"
            )


if __name__ == "__main__":
    main()
