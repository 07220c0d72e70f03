"""Operator controls: ``scheduler-py replan``, ``history`` and ``trigger``, and the
``serve`` options that switch the reconfiguration controller on (and the wiring of the
controller to Nimbus, ZooKeeper and the history directory).

Both commands talk to the running brain over its Thrift port (the brain holds the
controller and the history)::

    scheduler-py replan wordcount --dry-run            # proposed placement, gain, restarts
    scheduler-py replan wordcount --algorithm tdls     # ... and apply it (drain-out path)
    scheduler-py history wordcount                     # every decision, taken or declined
    scheduler-py trigger pause [--topology wordcount]  # the automatic trigger leaves it alone
    scheduler-py trigger resume                        # ... until resumed (resume: all pauses)

The brain's address is ``--brain HOST:PORT``, else ``$SCHEDULER_PY_BRAIN`` (the older
``$SCHEDULER_BRAIN`` still works, with a warning), else storm.yaml's ``scheduler.brain.host``
and ``scheduler.brain.port`` (``--storm-conf``), else
``127.0.0.1:9627``. A ``replan`` that applies a plan, and ``trigger``, carry the operator secret
(``scheduler_py/service/auth.py``: ``$SCHEDULER_PY_SECRET``, ``--secret-file``, or the file
the brain created at its first start), sent only once the brain proved it holds it
(``scheduler_py/service/client.py``). Exit status: 0 done (or nothing to do), 1 the brain
refused or the reconfiguration did not complete, 2 usage, 69 the brain unreachable, 78 no
usable operator secret (:mod:`scheduler_py.cli.exit_codes`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from scheduler_py.cli.cluster_options import (
    Addresses,
    add_storm_conf_arguments,
    duration_seconds,
    resolve,
)
from scheduler_py.cli.exit_codes import CONFIG, FAILED, OK, UNAVAILABLE, CommandError
from scheduler_py.config import parse_key_values
from scheduler_py.model.throughput import rate_text
from scheduler_py.reconfig.history import TERMINAL
from scheduler_py.service.auth import SECRET_ENV, SecretError, load_secret, secret_file
from scheduler_py.service.client import (
    BrainNotProven,
    BrainUnreachable,
    call_brain,
)
from scheduler_py.service.wire import wire


# -- serve -----------------------------------------------------------------------------
def add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    group = serve.add_argument_group("reconfiguration (adaptive re-scheduling)")
    group.add_argument(
        "--nimbus",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="Nimbus Thrift address, or several (the leader is used); switches the "
        "reconfiguration controller on (it deactivates/activates topologies around a "
        "re-assignment). Default: nimbus.seeds and nimbus.thrift.port of the --storm-conf "
        "file; none: no controller",
    )
    group.add_argument(
        "--state-dir",
        help="keep the reconfiguration history and the trigger pauses here, written through "
        "to the disk, so a restarted brain finishes a half-done reconfiguration (with --nimbus "
        "always on disk; default /var/lib/scheduler-py as root, else "
        "$XDG_STATE_HOME/scheduler-py, i.e. ~/.local/state/scheduler-py)",
    )
    group.add_argument(
        "--reconfig",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="trigger/drain setting, e.g. change.threshold=0.3 or enabled=false (see the "
        "docs/reconfiguration.md); topologies override with scheduler.reconfig.KEY",
    )
    group.add_argument(
        "--secret-file",
        help="the operator secret that `replan` must send (created, mode 0600, when missing; "
        f"default ${SECRET_ENV}, else $SCHEDULER_PY_SECRET_FILE, else "
        "~/.config/scheduler-py/operator.secret)",
    )
    group.add_argument(
        "--reconfig-check",
        dest="reconfig_check_secs",
        type=duration_seconds(),
        default=10.0,
        metavar="DURATION",
        help="how often the trigger looks at every topology (default 10s)",
    )
    group.add_argument(  # the older name (a bare number is seconds either way)
        "--reconfig-check-secs",
        dest="reconfig_check_secs",
        type=duration_seconds(),
        help=argparse.SUPPRESS,
    )


def build_controller(
    args: argparse.Namespace, planner: Any, addresses: Addresses | None = None
) -> Any:
    """The controller ``serve`` runs, or ``None`` without a Nimbus (``addresses``: where
    :func:`~scheduler_py.cli.cluster_options.resolve` found the cluster; default: the flags
    alone)."""
    if addresses is None:
        addresses = _flag_addresses(args)
    if not addresses.nimbus:
        return None
    from scheduler_py.nimbus import NimbusCtl
    from scheduler_py.reconfig.controller import Controller
    from scheduler_py.reconfig.history import History, default_state_dir
    from scheduler_py.reconfig.trigger import TriggerConfig

    overrides = parse_key_values(args.reconfig, "--reconfig")
    trigger = TriggerConfig().with_overrides(overrides, "--reconfig")
    # never in memory once Nimbus can be told to deactivate a topology (reconfig/history.py)
    directory = Path(args.state_dir) if args.state_dir else default_state_dir()
    try:
        history = History(directory)
    except OSError as error:
        raise CommandError(
            f"cannot keep the reconfiguration history in {directory} "
            f"({error}); expected a writable directory: pass --state-dir DIR",
            CONFIG,
        ) from None
    live = references = None
    if addresses.zookeeper:
        from scheduler_py.monitoring.links import ZooKeeperLink

        link = ZooKeeperLink(addresses.zookeeper, addresses.monitor_root)
        live, references = link.live, link.write_reference
    return Controller(
        planner,
        trigger,
        history,
        NimbusCtl.of(addresses.nimbus),
        live=live,
        references=references,
        check_secs=args.reconfig_check_secs,
    )


def _flag_addresses(args: argparse.Namespace) -> Addresses:
    """The addresses the flags give, with no storm.yaml nor environment."""
    from scheduler_py.config import keys
    from scheduler_py.nimbus import parse_addresses

    nimbus = parse_addresses(args.nimbus, 6627) if getattr(args, "nimbus", None) else ()
    root = getattr(args, "monitor_root", None) or keys.MONITOR_ZK_ROOT.default
    return Addresses(getattr(args, "zookeeper", None), nimbus, "", root)


# -- the brain client -------------------------------------------------------------------
def _call(
    address: str, method: str, *args: Any, timeout_ms: int = 60_000, secret_file: str | None = None
) -> Any:
    """``call_brain``; a read a brain with ``--require-auth-reads`` refuses is sent again with
    the operator secret (``$SCHEDULER_PY_SECRET``, ``secret_file``, the default file)."""

    def read_secret() -> str | None:
        found = load_secret(secret_file)
        return found.value if found is not None else None

    try:
        return call_brain(address, method, *args, timeout_ms=timeout_ms, read_secret=read_secret)
    except BrainNotProven as error:  # the secret was not sent (service/client.py)
        print(f"scheduler-py {method}: {error}", file=sys.stderr)
        raise SystemExit(FAILED) from None
    except BrainUnreachable as error:
        raise CommandError(
            f"cannot reach the brain at {address} ({error}); is `scheduler-py "
            "serve` running there (with --nimbus for reconfiguration)? --brain HOST:PORT",
            UNAVAILABLE,
        ) from None
    except wire().BrainError as error:
        print(f"scheduler-py {method}: the brain refused: {error.message}", file=sys.stderr)
        raise SystemExit(FAILED) from None


# -- rendering ----------------------------------------------------------------------------
def render_report(report: dict[str, Any]) -> str:
    lines = [
        f"topology {report['topology']} ({report['topology_id']}), algorithm "
        f"{report['algorithm']}, costs: {report['costs']}",
    ]
    width = max((len(m["executor"]) for m in report["moves"]), default=8)
    lines.append(f"  {'executor':<{width}}  {'tasks':<7}  {'now':<26}  proposed")
    for move in report["moves"]:
        mark = "" if move["from"] == move["to"] else "   <- moves"
        lines.append(
            f"  {move['executor']:<{width}}  {move['tasks']:<7}  {move['from'] or '-':<26}  "
            f"{move['to']}{mark}"
        )
    total = report["total_traffic"] or 0.0
    share = (lambda x: f" ({x / total:.0%} of all)") if total > 0 else (lambda x: "")
    lines += [
        f"  workers: {report['workers_before']} -> {report['workers_after']}; "
        f"restarted: {report['workers_restarted']}, stopped: {report['workers_stopped']}",
        f"  inter-worker traffic: {report['interworker_before']:.4g}"
        f"{share(report['interworker_before'])} -> {report['interworker_after']:.4g}"
        f"{share(report['interworker_after'])}; predicted gain "
        f"{report['predicted_gain']:.4g}",
        f"  max node utilisation: {report['max_node_utilisation_before']:.0%} -> "
        f"{report['max_node_utilisation_after']:.0%}",
    ]
    if report.get("objective") == "throughput":
        ratio = report.get("predicted_ratio")
        lines.append(
            f"  predicted throughput: {rate_text(report.get('predicted_throughput_before'))} -> "
            f"{rate_text(report.get('predicted_throughput_after'))} spout tuples/s (bottleneck "
            f"{report.get('bottleneck_before') or 'none'} -> "
            f"{report.get('bottleneck_after') or 'none'}); judged on it: at least "
            f"{f'x{ratio:.3g}' if isinstance(ratio, int | float) else 'unbounded'} over the "
            "tuple sizes planned for"
        )
    if report.get("violations_before"):
        lines.append(f"  the running placement breaks: {'; '.join(report['violations_before'])}")
    if report.get("unchanged"):
        lines.append("  the new plan IS the running placement: nothing to change")
    return "\n".join(lines)


def render_history(entries: list[dict[str, Any]]) -> str:
    if not entries:
        return "no reconfiguration decisions recorded"
    lines = [f"{'started':<19}  {'trigger':<10}  {'outcome':<11}  {'pause':>6}  details"]
    for entry in entries:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.get("started", 0)))
        pause = entry.get("pause_secs")
        numbers = entry.get("numbers") or {}
        gain = ""
        if "interworker_before" in numbers:
            gain = (
                f"inter-worker {numbers['interworker_before']:.3g} -> "
                f"{numbers['interworker_after']:.3g}, {numbers.get('workers_restarted', '?')} "
                "restart(s); "
            )
        lines.append(
            f"{started:<19}  {entry.get('trigger', '?'):<10}  {entry.get('state', '?'):<11}  "
            f"{f'{pause:.1f}s' if isinstance(pause, int | float) else '-':>6}  "
            f"{gain}{entry.get('reason', '')}"
        )
        indent = " " * 54
        if entry.get("trigger_detail"):
            lines.append(f"{indent}trigger: {entry['trigger_detail']}")
        if entry.get("drain"):
            lines.append(f"{indent}{entry['drain']}")
        if entry.get("measured"):
            from scheduler_py.reconfig.measured_gain import summary

            lines.append(f"{indent}{summary(entry['measured'])}")
        if int(entry.get("stages") or 1) > 1:
            lines.append(
                f"{indent}stage 1 of up to {entry['stages']} (the whole plan restarts "
                f"{entry.get('plan_workers_restarted', '?')} workers)"
            )
        if entry.get("states"):
            lines.append(f"{indent}states: {' → '.join(entry['states'])}")
    return "\n".join(lines)


# -- commands ----------------------------------------------------------------------------
def _topology_command(command: str, description: str) -> argparse.ArgumentParser:
    """The parser of a ``scheduler-py COMMAND TOPOLOGY`` operator command; the caller adds
    its own options, then :func:`_common`."""
    parser = argparse.ArgumentParser(prog=f"scheduler-py {command}", description=description)
    parser.add_argument("topology", help="topology name (or id)")
    return parser


def _secret_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--secret-file",
        help=f"the operator secret (default ${SECRET_ENV}, else $SCHEDULER_PY_SECRET_FILE, else "
        "the file the brain created: ~/.config/scheduler-py/operator.secret)",
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--brain",
        metavar="HOST:PORT",
        help="the brain's address (default $SCHEDULER_PY_BRAIN, else storm.yaml's "
        "scheduler.brain.host and scheduler.brain.port, else 127.0.0.1:9627)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_storm_conf_arguments(parser)


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed, with ``--brain`` resolved (flag, environment, storm.yaml)."""
    args = parser.parse_args(argv)
    args.brain = resolve(args).brain
    return args


def replan_main(argv: list[str]) -> int:
    parser = _topology_command(
        "replan",
        "Re-plan a running topology under its current costs and, unless --dry-run, apply "
        "the plan through the drain-out path.",
    )
    parser.add_argument("--algorithm", "-a", default="", help="default: the topology's own")
    parser.add_argument("--dry-run", action="store_true", help="show the plan, change nothing")
    parser.add_argument(
        "--no-wait", action="store_true", help="return once the reconfiguration has started"
    )
    parser.add_argument(
        "--timeout",
        type=duration_seconds(),
        default=600.0,
        metavar="DURATION",
        help="how long to follow it (default 10m)",
    )
    _secret_option(parser)
    _common(parser)
    args = _parse(parser, argv)
    secret = "" if args.dry_run else _operator_secret(args.secret_file)
    report = json.loads(
        _call(
            args.brain,
            "replan",
            args.topology,
            args.algorithm,
            args.dry_run,
            secret,
            secret_file=args.secret_file,
        )
    )
    print(json.dumps(report, indent=2) if args.json else render_report(report))
    entry_id = report.get("reconfiguration_id")
    if args.dry_run or not entry_id:
        if not args.dry_run and not args.json:
            print(report.get("reconfiguration", "nothing applied"))
        return 0
    print(f"reconfiguration {entry_id} started (drain-out, re-assign, resume)")
    if args.no_wait:
        return 0
    return _follow(args, entry_id)


def _operator_secret(explicit_file: str | None, command: str = "replan") -> str:
    try:
        secret = load_secret(explicit_file)
    except SecretError as error:
        raise CommandError(f"scheduler-py {command}: {error}", CONFIG) from None
    if secret is None:
        raise CommandError(
            f"scheduler-py {command}: no operator secret found: expected ${SECRET_ENV} or the "
            f"file {secret_file(explicit_file)}, which `scheduler-py serve` creates at its first "
            "start; run this on the brain's host as the brain's user, or pass --secret-file PATH"
            + (" (--dry-run needs none)" if command == "replan" else ""),
            CONFIG,
        )
    return secret.value


def _follow(args: argparse.Namespace, entry_id: str) -> int:
    deadline = time.monotonic() + args.timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        entries = json.loads(
            _call(args.brain, "history", args.topology, secret_file=args.secret_file)
        )
        entry = next((e for e in entries if e.get("id") == entry_id), None)
        if entry is not None:
            for state in entry.get("states", [])[len(seen) :]:
                print(f"  {state}")
            seen = list(entry.get("states", []))
            if entry.get("state") in TERMINAL:
                pause = entry.get("pause_secs")
                detail = f"; spouts paused {pause:.1f}s" if isinstance(pause, int | float) else ""
                print(f"{entry['state']}{detail}: {entry.get('reason', '')}".rstrip(": "))
                return OK if entry["state"] == "completed" else FAILED
        time.sleep(1.0)
    print(f"still running after {args.timeout:g}s; see `scheduler-py history {args.topology}`")
    return FAILED


def history_main(argv: list[str]) -> int:
    parser = _topology_command(
        "history",
        "A topology's reconfiguration history: every trigger decision, taken or declined, "
        "with its numbers and outcome.",
    )
    parser.add_argument(
        "--state-dir", help="read the brain's history files directly (the brain may be down)"
    )
    _secret_option(parser)  # for a brain that answers reads only with it (--require-auth-reads)
    _common(parser)
    args = _parse(parser, argv)
    if args.state_dir:
        from scheduler_py.reconfig.history import History

        entries = History(Path(args.state_dir)).entries(args.topology)
    else:
        entries = json.loads(
            _call(args.brain, "history", args.topology, secret_file=args.secret_file)
        )
    print(json.dumps(entries, indent=2) if args.json else render_history(entries))
    return 0


def render_trigger(state: dict[str, Any]) -> str:
    """The trigger's state (``Controller.trigger_state``) in a few lines."""
    if not state.get("enabled", True):
        head = "automatic trigger: disabled by configuration (--reconfig enabled=false)"
    elif state.get("paused"):
        head = "automatic trigger: PAUSED for every topology"
    else:
        head = "automatic trigger: running"
    lines = [head]
    for name, mark in (state.get("paused_topologies") or {}).items():
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(mark.get("since", 0)))
        lines.append(f"  paused for {name} since {since}")
    for name, why in (state.get("stale_aggregates") or {}).items():
        lines.append(f"  not watching {name}'s aggregate: {why}")
    lines.append(f"  pauses kept in: {state.get('kept_in', '?')}")
    return "\n".join(lines)


def trigger_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="scheduler-py trigger",
        description="Pause or resume the brain's automatic reconfiguration trigger, for every "
        "topology or one (--topology). Operator replans still work while it is paused. "
        "`resume` without --topology clears every pause.",
    )
    parser.add_argument("action", choices=("pause", "resume"))
    parser.add_argument("--topology", "-t", default="", help="topology name (or id)")
    _secret_option(parser)
    _common(parser)
    args = _parse(parser, argv)
    secret = _operator_secret(args.secret_file, "trigger")
    paused = args.action == "pause"
    state = json.loads(_call(args.brain, "set_trigger_paused", paused, args.topology, secret))
    print(json.dumps(state, indent=2) if args.json else render_trigger(state))
    return 0
