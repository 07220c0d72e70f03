"""The checkout the cluster benchmarks run from. They start a private local Storm cluster with
``deploy/cluster-up.sh`` and its helpers, submit ``topologies/`` and build the shim from
``storm_plugin/`` (deploy/README.md); the ``scheduler-py-bench`` wheel (deploy/bench_dist.py)
carries the benchmarks' Python, not those files. :func:`checkout_path` finds one of them, or
says in one message what is missing and where to run from, instead of a file-not-found
traceback halfway through a run."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""the checkout's root when this package runs from one (an editable install, ``make venv``)"""


class CheckoutMissing(RuntimeError):
    """A file of the checkout a cluster benchmark needs is not there (the benchmarks were
    installed from the ``scheduler-py-bench`` wheel, or the checkout is incomplete)."""


def checkout_path(relative: str) -> Path:
    """``relative`` (``deploy/cluster-up.sh``) in the checkout, which must exist."""
    path = REPO / relative
    if not path.exists():
        raise CheckoutMissing(
            f"this benchmark runs a local Storm cluster from a scheduler-py checkout and "
            f"expected {relative} at {path}, found nothing: the scheduler-py-bench package "
            "carries the benchmarks, not the cluster scripts, topologies and shim sources; "
            "run it from a clone of the repository (make venv, then "
            ".venv/bin/scheduler-py bench NAME there)"
        )
    return path
