"""The data sources the dashboard (``scheduler_py/dashboard/``) reads and steers through.

The dashboard is an edge and must not import ``service``, ``monitoring`` or ``reconfig``
(ARCHITECTURE.md, "Layers"); ``scheduler_py/cli/dashboard.py`` builds the concrete sources
(a Thrift client of the brain, the plan log file, ZooKeeper's aggregates) and hands them in.

Every method raises :class:`SourceUnavailable` when its source cannot be reached, and
:class:`~scheduler_py.scheduling.interfaces.OperatorError` when the source answered but
refused (the message says why); the dashboard shows both and keeps serving the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class SourceUnavailable(Exception):
    """A data source cannot be reached; the message names it and what to check."""


class BrainPort(Protocol):
    """The brain's Thrift calls the dashboard uses (``scheduler_py/service/scheduler.thrift``)."""

    address: str

    def status(self) -> Mapping[str, Any]:
        """The last round (``scheduler_py/scheduling/status.py``)."""
        ...

    def replan(
        self, topology: str, algorithm: str, params: Mapping[str, Any], dry_run: bool
    ) -> Mapping[str, Any]:
        """``replan``; unless ``dry_run`` the source sends the brain's operator secret."""
        ...

    def history(self, topology: str) -> Sequence[Mapping[str, Any]]:
        """The topology's reconfiguration history (``scheduler_py/reconfig/history.py``)."""
        ...

    def set_trigger_paused(self, paused: bool, topology: str | None) -> Mapping[str, Any]:
        """``set_trigger_paused`` with the brain's operator secret: pause or resume the
        automatic trigger for ``topology`` or every topology (``None``); the trigger's state
        (``scheduler_py/reconfig/pause.py``)."""
        ...


class PlanLogPort(Protocol):
    """The brain's plan log (``scheduler-py serve --plan-log``), newest last."""

    def entries(self, limit: int) -> Sequence[Mapping[str, Any]]: ...


class AggregatePort(Protocol):
    """Measured aggregates (``docs/monitoring-format.md`` §4)."""

    def aggregate(self, topology_id: str) -> Mapping[str, Any] | None:
        """The topology's latest aggregate, ``None`` when there is none."""
        ...
