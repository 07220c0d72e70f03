"""The thriftpy2 service Nimbus's shim calls every scheduling round (``scheduler-py serve``).

Framed transport + binary protocol, like the shim. Every reply is also appended to a JSON
lines *plan log* (one object per topology decision) so operators and ``make demo`` can see
what the brain planned; the log is the only state the service writes.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_server
from thriftpy2.transport import TFramedTransportFactory

from scheduler_py import __version__
from scheduler_py.reconfig.controller import Controller, ReconfigError
from scheduler_py.service.planner import PlannerConfig, RoundRecord, plan_round
from scheduler_py.service.wire import wire

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9627


class BrainHandler:
    """Implements the ``SchedulerBrain`` service of ``scheduler.thrift``."""

    def __init__(
        self,
        config: PlannerConfig,
        plan_log: Path | None = None,
        controller: Controller | None = None,
    ) -> None:
        self.config = config
        self.plan_log = plan_log
        self.controller = controller
        self._lock = threading.Lock()
        self.last_records: dict[str, RoundRecord] = {}

    def ping(self) -> str:
        return __version__

    def schedule(self, snapshot: Any) -> Any:
        started = time.perf_counter()
        armed = self.controller.armed() if self.controller is not None else None
        try:
            reply, records = plan_round(snapshot, self.config, armed)
        except Exception as error:  # never let one round kill the service
            log.exception("round %s failed", getattr(snapshot, "round", "?"))
            raise wire().BrainError(f"brain failed on this snapshot: {error}") from error
        seconds = time.perf_counter() - started
        self._explain_kept(reply)
        self._remember(snapshot, records, seconds)
        if self.controller is not None:
            self.controller.observe_round(snapshot, records)
        return reply

    def replan(self, topology: str, algorithm: str, dry_run: bool) -> str:
        controller = self._controller()
        try:
            report = controller.replan(topology, algorithm or "", bool(dry_run))
        except ReconfigError as error:
            raise wire().BrainError(str(error)) from error
        except Exception as error:
            log.exception("replan %s failed", topology)
            raise wire().BrainError(f"replan failed: {type(error).__name__}: {error}") from error
        return json.dumps(report, sort_keys=True, default=str)

    def history(self, topology: str) -> str:
        controller = self._controller()
        try:
            return json.dumps(controller.history_of(topology), sort_keys=True, default=str)
        except ReconfigError as error:
            raise wire().BrainError(str(error)) from error

    def _controller(self) -> Controller:
        if self.controller is None:
            raise wire().BrainError(
                "this brain runs without the reconfiguration controller; start "
                "`scheduler-py serve` with --nimbus HOST:PORT"
            )
        return self.controller

    def _explain_kept(self, reply: Any) -> None:
        """A kept topology keeps the reason of the plan that placed it (the shim shows it as
        the topology status, which should not flip to "nothing to do" one round later)."""
        with self._lock:
            for plan in reply.plans:
                placed = self.last_records.get(plan.topology_id)
                if plan.decision == wire().Decision.KEEP and placed and placed.decision == "PLACE":
                    plan.algorithm = placed.algorithm
                    plan.reason = f"{placed.reason} (unchanged)"

    def _remember(self, snapshot: Any, records: list[RoundRecord], seconds: float) -> None:
        with self._lock:
            for record in records:
                if record.decision == "KEEP":
                    continue
                changed = self.last_records.get(record.topology_id)
                self.last_records[record.topology_id] = record
                if (
                    changed is None
                    or changed.decision != record.decision
                    or (changed.placement != record.placement)
                ):
                    log.info(
                        "round %s: %s %s (%s)",
                        snapshot.round,
                        record.decision,
                        record.topology_id,
                        record.reason,
                    )
                self._append(snapshot, record, seconds)

    def _append(self, snapshot: Any, record: RoundRecord, seconds: float) -> None:
        if self.plan_log is None:
            return
        entry = asdict(record) | {
            "round": snapshot.round,
            "timestamp_ms": snapshot.timestamp_ms,
            "round_seconds": seconds,
            "placement": {e: list(s) for e, s in record.placement.items()},
            "storm_placement": {e: list(s) for e, s in record.storm_placement.items()},
        }
        self.plan_log.parent.mkdir(parents=True, exist_ok=True)
        with self.plan_log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry, sort_keys=True, default=str) + "\n")


def make_brain_server(
    handler: BrainHandler,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    client_timeout_ms: int = 30_000,
):
    return make_server(
        wire().SchedulerBrain,
        handler,
        host=host,
        port=port,
        client_timeout=client_timeout_ms,
        trans_factory=TFramedTransportFactory(),
        proto_factory=TBinaryProtocolFactory(),
    )


def serve(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    config: PlannerConfig | None = None,
    plan_log: Path | None = None,
    controller: Controller | None = None,
) -> None:
    """Serve forever (until SIGTERM/SIGINT)."""
    handler = BrainHandler(config or PlannerConfig(), plan_log, controller)
    server = make_brain_server(handler, host, port)
    log.info(
        "scheduler-py brain %s listening on %s:%d (default algorithm %s)",
        __version__,
        host,
        port,
        handler.config.default_algorithm,
    )
    measured = handler.config.measured
    if measured is not None:
        log.info("measured costs from %s", getattr(measured, "hosts", type(measured).__name__))
    if controller is not None:
        controller.start()
        log.info(
            "reconfiguration controller on (%s; history in %s)",
            "automatic trigger" if controller.trigger.enabled else "operator replans only",
            controller.history.directory or "memory",
        )
    try:
        server.serve()
    finally:
        if controller is not None:
            controller.stop()
        if measured is not None:
            measured.close()
