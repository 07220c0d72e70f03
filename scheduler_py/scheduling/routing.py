"""The routing numbers of a plan summary, computed when someone reads them.

Every PLACE decision's summary carries the traffic as Storm's locality-aware shuffle would
route it (:func:`routing_summary`, :mod:`scheduler_py.model.loadaware`). Only the plan log,
the status document and ``bench cluster`` read those numbers, and listing the pairs twice
was about a quarter of a topology's time in a 1,000-executor, 50-topology round
(``docs/evaluation.md``, the Nimbus round trip). A round therefore attaches them as a
:class:`DeferredSummary`: its other fields are there at once, the routing fields are computed
on the first read of any of them (once, whichever thread reads first), which is after the
reply has gone to Nimbus when the reader is the plan log's writer
(``scheduler_py/service/plan_log.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from scheduler_py.model.bound import estimated_pairs
from scheduler_py.model.flows import declared_weights
from scheduler_py.model.loadaware import (
    crossing_traffic,
    loadaware_pair_traffic,
    uniform_pair_traffic,
    user_internode_share,
)
from scheduler_py.model.types import Placement, Problem

ROUND_ROUTING_PAIRS = 2_000
"""above this many communicating executor pairs the routing fields are ``None``
(:func:`routing_summary` lists every pair twice, about 9 ms per 10,000 pairs)"""
ROUTING_FIELDS = (
    "internode_traffic_loadaware",
    "user_internode_share_loadaware",
    "user_internode_share_uniform",
)


def routing_summary(problem: Problem, placement: Placement) -> dict[str, float | None]:
    """Inter-node traffic as Storm's locality-aware shuffle would route it, and the share of
    the user executors' traffic crossing nodes under that routing and under the uniform split
    (:mod:`scheduler_py.model.loadaware`; ``bench cluster`` turns the shares into bytes).
    ``None`` above :data:`ROUND_ROUTING_PAIRS` executor pairs."""
    if estimated_pairs(problem) > ROUND_ROUTING_PAIRS:
        return dict.fromkeys(ROUTING_FIELDS)
    topology = problem.topology
    weights = None if topology.has_measured_traffic else declared_weights(topology)  # once
    routed = loadaware_pair_traffic(problem, placement, weights)
    return {
        "internode_traffic_loadaware": crossing_traffic(placement, routed),
        "user_internode_share_loadaware": user_internode_share(problem, placement, routed),
        "user_internode_share_uniform": user_internode_share(
            problem, placement, uniform_pair_traffic(problem, weights)
        ),
    }


class DeferredSummary(Mapping[str, Any]):
    """A read-only summary whose ``deferred_keys`` come from ``compute`` on first read.

    Membership and ``len`` answer without computing; reading a deferred key, iterating the
    items or copying with ``dict()`` computes them once (guarded by a lock, so two readers
    never compute twice) and the function is dropped afterwards, with the problem and
    placement it held. ``optional_keys`` are keys ``compute`` may leave out (a traffic
    bound's ``bound_reason``, :meth:`~scheduler_py.model.bound.TrafficBound.summary`): the
    summary has one only when ``compute`` produced it, as it would have had it not been
    deferred, so while there are any, membership of one, ``len`` and iteration compute too."""

    def __init__(
        self,
        ready: Mapping[str, Any],
        deferred_keys: tuple[str, ...],
        compute: Callable[[], Mapping[str, Any]],
        optional_keys: tuple[str, ...] = (),
    ) -> None:
        self._ready = dict(ready)
        self._deferred_keys = tuple(k for k in deferred_keys if k not in self._ready)
        self._optional_keys = tuple(
            k for k in optional_keys if k not in self._ready and k not in self._deferred_keys
        )
        self._compute: Callable[[], Mapping[str, Any]] | None = compute
        self._computed: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def _deferred(self) -> dict[str, Any]:
        with self._lock:
            if self._computed is None:
                assert self._compute is not None
                values = self._compute()
                computed = {key: values.get(key) for key in self._deferred_keys}
                computed |= {key: values[key] for key in self._optional_keys if key in values}
                self._computed = computed
                self._compute = None
            return self._computed

    def _later_keys(self) -> tuple[str, ...]:
        """The deferred keys the summary has: which optional ones, only once computed."""
        if not self._optional_keys:
            return self._deferred_keys
        return tuple(self._deferred())

    def __getitem__(self, key: str) -> Any:
        if key in self._ready:
            return self._ready[key]
        if key in self._deferred_keys or key in self._optional_keys:
            return self._deferred()[key]
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if key in self._ready or key in self._deferred_keys:
            return True
        return key in self._optional_keys and key in self._deferred()

    def __iter__(self) -> Iterator[str]:
        yield from self._ready
        yield from self._later_keys()

    def __len__(self) -> int:
        return len(self._ready) + len(self._later_keys())

    @property
    def computed(self) -> bool:
        """Whether the deferred fields have been computed (read) yet."""
        return self._computed is not None

    def __repr__(self) -> str:
        shown = "computed" if self.computed else "not computed yet"
        later = self._deferred_keys + self._optional_keys
        return f"DeferredSummary({self._ready!r}, {later!r} {shown})"
