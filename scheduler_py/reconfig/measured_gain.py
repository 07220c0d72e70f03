"""What a reconfiguration bought, measured (docs/reconfiguration.md, "Measured gain").

After a reconfiguration the controller waits for the first aggregate whose window starts
once the topology has resumed and warmed up (``warmup_secs`` after the resume,
:func:`scheduler_py.reconfig.follow_up.measure_from_ms`; ``docs/monitoring-format.md`` §4:
``window_start_ms``) and
compares it with the aggregate the decision was made on: the share of tuples that crossed
worker processes (inter-worker tuples/s ÷ all tuples/s between executors, so a change in
input rate does not pass for a gain) and the throughput (all tuples/s between executors).
The predicted numbers of the plan (:meth:`scheduler_py.scheduling.proposal.Proposal.report`)
are kept next to them. A measured share that went *up* is a negative gain: the history says
so and the controller leaves the topology alone for ``regret_backoff_secs``. A re-plan judged
on the throughput model (the report's ``objective`` is ``throughput``) may well raise the
inter-worker share to raise the rate, so its gain is the throughput's: negative when it fell
by more than :data:`THROUGHPUT_TOLERANCE`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

NEGATIVE_TOLERANCE = 0.005
"""share points of noise below which a rise of the inter-worker share is not a regression"""
THROUGHPUT_TOLERANCE = 0.05
"""relative fall of the measured throughput below which a ``throughput`` re-plan is not a
regression (run-to-run noise on the machines of ``docs/evaluation.md`` is about 5 %)"""


@dataclass(frozen=True)
class Measured:
    """Traffic of one aggregate."""

    computed_at_ms: int
    window_start_ms: int
    interworker_tuples_per_s: float
    total_tuples_per_s: float

    @property
    def share(self) -> float | None:
        if self.total_tuples_per_s <= 0:
            return None
        return self.interworker_tuples_per_s / self.total_tuples_per_s


def measure(document: Mapping[str, Any] | None) -> Measured | None:
    """The traffic of an aggregate, pairs located by the worker (supervisor, port) each
    executor was measured in; ``None`` without a document or without pairs."""
    if not document or not document.get("pairs"):
        return None
    worker = {
        (ex["task_start"], ex["task_end"]): (ex.get("supervisor_id"), ex.get("port"))
        for ex in document.get("executors", ())
    }
    remote = total = 0.0
    for pair in document["pairs"]:
        src, dst = worker.get(tuple(pair["src"])), worker.get(tuple(pair["dst"]))
        if src is None or dst is None:
            continue
        rate = float(pair["tuples_per_s"])
        total += rate
        remote += rate if src != dst else 0.0
    return Measured(
        int(document.get("computed_at_ms") or 0),
        int(document.get("window_start_ms") or 0),
        remote,
        total,
    )


def is_after(document: Mapping[str, Any] | None, since_ms: int) -> bool:
    """Whether ``document`` measured only time after ``since_ms``."""
    return bool(document) and int(document.get("window_start_ms") or 0) >= since_ms


def compare(
    before: Measured | None, after: Measured, predicted: Mapping[str, Any]
) -> dict[str, Any]:
    """The history's ``measured`` object: both measurements, the measured gain (share
    points of inter-worker traffic saved), the throughput ratio, the predicted shares and
    ``negative``: the share rose by more than :data:`NEGATIVE_TOLERANCE`, or for a plan
    judged on throughput, the throughput fell by more than :data:`THROUGHPUT_TOLERANCE`."""
    total = float(predicted.get("total_traffic") or 0.0)

    def predicted_share(key: str) -> float | None:
        return float(predicted[key]) / total if total > 0 and key in predicted else None

    result: dict[str, Any] = {
        "before": asdict(before) if before else None,
        "after": asdict(after),
        "interworker_share_before": before.share if before else None,
        "interworker_share_after": after.share,
        "predicted_share_before": predicted_share("interworker_before"),
        "predicted_share_after": predicted_share("interworker_after"),
        "gain": None,
        "throughput_ratio": None,
        "negative": False,
    }
    if before is not None and before.share is not None and after.share is not None:
        result["gain"] = before.share - after.share
        result["negative"] = result["gain"] < -NEGATIVE_TOLERANCE
    if before is not None and before.total_tuples_per_s > 0:
        result["throughput_ratio"] = after.total_tuples_per_s / before.total_tuples_per_s
    if predicted.get("objective") == "throughput":
        ratio = result["throughput_ratio"]
        result["objective"] = "throughput"
        result["negative"] = ratio is not None and ratio < 1.0 - THROUGHPUT_TOLERANCE
    return result


def summary(measured: Mapping[str, Any]) -> str:
    """One line: ``measured inter-worker 62% → 31% (gain 31 points, predicted 33), throughput
    ×1.08``."""

    def pct(value: Any) -> str:
        return f"{value:.0%}" if isinstance(value, int | float) else "?"

    text = (
        f"measured inter-worker {pct(measured.get('interworker_share_before'))} → "
        f"{pct(measured.get('interworker_share_after'))}"
    )
    gain = measured.get("gain")
    on_throughput = measured.get("objective") == "throughput"
    if isinstance(gain, int | float):
        negative = measured.get("negative") and not on_throughput
        text += f" ({'NEGATIVE ' if negative else ''}gain {gain * 100:+.0f} points"
        pb, pa = measured.get("predicted_share_before"), measured.get("predicted_share_after")
        if isinstance(pb, int | float) and isinstance(pa, int | float):
            text += f", predicted {(pb - pa) * 100:+.0f}"
        text += ")"
    ratio = measured.get("throughput_ratio")
    if isinstance(ratio, int | float):
        negative = measured.get("negative") and on_throughput
        text += f", {'NEGATIVE ' if negative else ''}throughput ×{ratio:.2f}"
    return text
