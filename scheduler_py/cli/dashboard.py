"""``scheduler-py dashboard``: build the dashboard's data sources from the edges and run it.

The dashboard (``scheduler_py/dashboard/``) knows only the ports of
``scheduler_py/scheduling/dashboard_ports.py``; this module implements them with the brain's
Thrift client (``scheduler_py/service/client.py``), the operator secret
(``scheduler_py/service/auth.py``), and ZooKeeper's aggregates
(``scheduler_py/monitoring/measured.py``), then serves the Flask app.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scheduler_py.cli.cluster_options import (
    add_monitor_root_argument,
    add_storm_conf_arguments,
    resolve,
)
from scheduler_py.cli.exit_codes import CONFIG, USAGE, CommandError
from scheduler_py.cli.logging_setup import add_log_level_argument, configure_logging
from scheduler_py.scheduling.dashboard_ports import SourceUnavailable
from scheduler_py.scheduling.interfaces import OperatorError

log = logging.getLogger(__name__)


class ThriftBrain:
    """:class:`~scheduler_py.scheduling.dashboard_ports.BrainPort` over the brain's Thrift
    service; one connection per call, so a restarted brain is picked up at once."""

    def __init__(
        self,
        address: str,
        secret: Callable[[], str | None],
        timeout_ms: int = 3000,
        dry_run_timeout_ms: int = 25_000,
    ) -> None:
        self.address = address
        self._secret = secret
        self.timeout_ms = timeout_ms
        self.dry_run_timeout_ms = dry_run_timeout_ms
        """a what-if's wait for the brain: its budget and a margin, so a brain that never
        answers frees the what-if's slot (``scheduler_py/dashboard/limits.py``)"""

    def status(self) -> Mapping[str, Any]:
        return json.loads(self._call("status"))

    def replan(
        self, topology: str, algorithm: str, params: Mapping[str, Any], dry_run: bool
    ) -> Mapping[str, Any]:
        secret = "" if dry_run else self._operator_secret("an apply")
        args = (topology, algorithm, dry_run, secret, json.dumps(dict(params)))
        if dry_run:  # the what-if's budget (scheduler_py/dashboard/limits.py) and a margin
            return json.loads(self._call("replan", *args, timeout_ms=self.dry_run_timeout_ms))
        return json.loads(self._call("replan", *args, slow=True))

    def history(self, topology: str) -> Sequence[Mapping[str, Any]]:
        return json.loads(self._call("history", topology))

    def set_trigger_paused(self, paused: bool, topology: str | None) -> Mapping[str, Any]:
        secret = self._operator_secret("a trigger pause or resume")
        return json.loads(self._call("set_trigger_paused", paused, topology or "", secret))

    def _operator_secret(self, what: str) -> str:
        secret = self._secret() or ""
        if not secret:
            raise OperatorError(
                f"the dashboard has no operator secret to send with {what}: expected "
                "$SCHEDULER_PY_SECRET or the brain's secret file (--secret-file PATH)"
            )
        return secret

    def _call(
        self, method: str, *args: Any, slow: bool = False, timeout_ms: int | None = None
    ) -> str:
        from scheduler_py.service.client import BrainNotProven, BrainUnreachable, call_brain
        from scheduler_py.service.wire import wire

        timeout_ms = timeout_ms or (60_000 if slow else self.timeout_ms)
        try:
            # a brain with --require-auth-reads gets the operator secret with reads as well
            return call_brain(
                self.address, method, *args, timeout_ms=timeout_ms, read_secret=self._secret
            )
        except BrainNotProven as error:  # the secret was not sent (service/client.py)
            raise OperatorError(str(error)) from None
        except BrainUnreachable as error:
            raise SourceUnavailable(
                f"cannot connect to the brain at {self.address} ({error}); is `scheduler-py "
                "serve` running there? (--brain HOST:PORT)"
            ) from None
        except wire().BrainError as error:
            raise OperatorError(error.message) from None
        except Exception as error:
            raise SourceUnavailable(
                f"the brain at {self.address} did not answer `{method}` ({type(error).__name__}: "
                f"{error}); an older brain lacks `status` (restart it from this version)"
            ) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8627, help="port (default 8627)")
    parser.add_argument(
        "--brain",
        metavar="HOST:PORT",
        help="the brain's address (default $SCHEDULER_PY_BRAIN, else storm.yaml's "
        "scheduler.brain.host and scheduler.brain.port, else 127.0.0.1:9627)",
    )
    parser.add_argument(
        "--token-file",
        help="bearer token mutating requests need (created, mode 0600, when missing); "
        "without it the dashboard is read-only",
    )
    parser.add_argument(
        "--require-token",
        action="store_true",
        help="every page and API request needs the token of --token-file too (Authorization: "
        "Bearer, or the session cookie /login sets); only the static files and /login are "
        "open (default: reading is open; docker-compose sets it)",
    )
    parser.add_argument(
        "--secret-file",
        help="the brain's operator secret, sent with an apply (default $SCHEDULER_PY_SECRET, "
        "else $SCHEDULER_PY_SECRET_FILE, else ~/.config/scheduler-py/operator.secret)",
    )
    parser.add_argument("--plan-log", help="the brain's plan log (serve --plan-log)")
    parser.add_argument(
        "--zookeeper",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="read measured aggregates from this ZooKeeper (default $SCHEDULER_PY_ZOOKEEPER, "
        "else storm.yaml's storm.zookeeper.servers; none: no measured costs shown)",
    )
    add_monitor_root_argument(parser)
    add_storm_conf_arguments(parser)
    parser.add_argument("--log-file", help="log here instead of stderr")
    add_log_level_argument(parser)


def run(args: argparse.Namespace) -> int:
    configure_logging(args.log_level, args.log_file)
    try:
        from scheduler_py.dashboard.app import create_app
        from scheduler_py.dashboard.server import serve
    except ImportError as error:
        raise CommandError(
            f"scheduler-py dashboard: {error}; expected Flask and waitress: "
            "pip install 'scheduler-py[dashboard]'",
            CONFIG,
        ) from None
    addresses = resolve(args)  # flags, $SCHEDULER_PY_*, storm.yaml
    from scheduler_py.dashboard.planlog import PlanLogFile
    from scheduler_py.dashboard.prefetch import DEFAULT_PERIOD
    from scheduler_py.dashboard.sources import Sources
    from scheduler_py.dashboard.token import TokenError, load_or_create_token

    if args.require_token and not args.token_file:
        raise CommandError(
            "scheduler-py dashboard: --require-token needs the token it checks: expected "
            "--token-file PATH as well",
            USAGE,
        )
    token = None
    if args.token_file:
        try:
            token = load_or_create_token(Path(args.token_file))
        except TokenError as error:
            raise CommandError(f"scheduler-py dashboard: {error}", CONFIG) from None
    aggregates = None
    if addresses.zookeeper:
        from scheduler_py.monitoring.measured import ZooKeeperAggregates

        aggregates = ZooKeeperAggregates(addresses.zookeeper, addresses.monitor_root)
    from scheduler_py.dashboard.limits import WHATIF_BUDGET_SECS

    brain = ThriftBrain(
        addresses.brain,
        _secret_reader(args.secret_file),
        dry_run_timeout_ms=int(WHATIF_BUDGET_SECS * 1000) + 5000,
    )
    sources = Sources(
        brain,
        PlanLogFile(Path(args.plan_log)) if args.plan_log else None,
        aggregates,
        token,
        prefetch_secs=DEFAULT_PERIOD,
    )
    mode = f"apply needs the token in {args.token_file}" if token else "read-only (no --token-file)"
    if args.require_token:
        mode = f"every request needs the token in {args.token_file}"

    def announce(listening: list[tuple[str, int]]) -> None:
        for host, port in listening:
            host = f"[{host}]" if ":" in host else host
            print(f"scheduler-py dashboard: http://{host}:{port}/ ({mode})", flush=True)

    from scheduler_py.cli.termination import Terminated, sigterm_unwinds

    try:
        with sigterm_unwinds():  # a service manager's stop closes the sockets, as Ctrl-C does
            app = create_app(sources, args.require_token)
            serve(app, args.host, args.port, on_listening=announce)
    except Terminated:
        log.info("scheduler-py dashboard stopped on SIGTERM")
    return 0


def _secret_reader(explicit: str | None) -> Callable[[], str | None]:
    def read() -> str | None:
        from scheduler_py.service.auth import SecretError, load_secret

        try:
            secret = load_secret(explicit)
        except SecretError as error:
            raise OperatorError(str(error)) from None
        return secret.value if secret else None

    return read
