"""``scheduler-py``: the brain's command line.

Sub-commands: ``serve`` (the Thrift service Nimbus's shim calls), ``plan`` (plan a JSON
problem offline), ``algorithms`` (list what is registered), ``bench`` (benchmarks),
``placement`` (where a running topology's executors are, per Nimbus and per the brain),
``aggregate`` (the PySpark monitoring aggregation, :mod:`scheduler_py.cli.aggregate`),
``replan``/``history``/``trigger`` (adaptive re-scheduling, :mod:`scheduler_py.cli.operator`),
``dashboard`` (the Flask dashboard, :mod:`scheduler_py.cli.dashboard`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scheduler_py import __version__
from scheduler_py.cli import exit_codes
from scheduler_py.cli.cluster_options import (
    add_monitor_root_argument,
    add_storm_conf_arguments,
    duration_ms,
    duration_seconds,
    nimbus_text,
    resolve,
)
from scheduler_py.cli.logging_setup import add_log_level_argument, configure_logging
from scheduler_py.config import ConfigValueError, keys, parse_key_values
from scheduler_py.model.errors import SchedulingError, UnknownAlgorithmError


def _parse_params(items: list[str]) -> dict[str, Any]:
    return dict(parse_key_values(items, "--param"))


def cmd_serve(args: argparse.Namespace) -> int:
    from scheduler_py.algorithms import registry
    from scheduler_py.scheduling.round import RoundConfig
    from scheduler_py.service.server import serve

    if args.require_auth_reads and args.allow_unauthenticated_rounds:
        raise exit_codes.CommandError(
            "scheduler-py serve: --require-auth-reads refuses every call without a credential, "
            "so it cannot be combined with --allow-unauthenticated-rounds; expected one of them",
            exit_codes.USAGE,
        )
    configure_logging(args.log_level, args.log_file)
    registry.get(args.algorithm)  # fail fast on an unknown default
    params = {args.algorithm: _parse_params(args.param)} if args.param else {}
    addresses = resolve(args, explicit_only=True)  # the flags, then --storm-conf's storm.yaml
    log = logging.getLogger(__name__)
    log.info(
        "ZooKeeper: %s; Nimbus: %s; monitoring root %s",
        addresses.zookeeper or "none (declared costs)",
        nimbus_text(addresses.nimbus) or "none (no reconfiguration controller)",
        addresses.monitor_root,
    )
    measured = None
    if addresses.zookeeper:
        from scheduler_py.monitoring.measured import ZooKeeperAggregates

        measured = ZooKeeperAggregates(addresses.zookeeper, addresses.monitor_root)
    config = RoundConfig(
        default_algorithm=args.algorithm,
        default_params=params,
        costs=measured,
        round_budget_secs=args.round_budget_ms / 1000,
    )
    from scheduler_py.cli.operator import build_controller

    controller = build_controller(args, config, addresses)
    secret = None
    if controller is not None or args.require_auth_reads:
        from scheduler_py.service.auth import SecretError, ensure_secret

        try:
            secret = ensure_secret(args.secret_file)
        except SecretError as error:
            raise exit_codes.CommandError(
                f"scheduler-py serve: {error}", exit_codes.CONFIG
            ) from None
    from scheduler_py.service.shim_auth import ShimAuth, ShimKeyError, ensure_key

    try:
        shim_auth = ShimAuth(ensure_key(args.shim_key_file), args.allow_unauthenticated_rounds)
    except ShimKeyError as error:
        raise exit_codes.CommandError(f"scheduler-py serve: {error}", exit_codes.CONFIG) from None
    from scheduler_py.cli.termination import Terminated, sigterm_unwinds

    try:
        with sigterm_unwinds():  # a service manager's stop runs serve's cleanup, as Ctrl-C does
            serve(
                args.host,
                args.port,
                config,
                Path(args.plan_log) if args.plan_log else None,
                controller,
                secret,
                shim_auth,
                reads_need_secret=args.require_auth_reads,
            )
    except Terminated:
        logging.getLogger(__name__).info("scheduler-py serve stopped on SIGTERM")
    return 0


def cmd_algorithms(args: argparse.Namespace) -> int:
    from scheduler_py.algorithms.registry import algorithms

    for name, info in algorithms().items():
        print(f"{name:10s} {info.paper}")
        print(f"{'':10s} {info.summary}")
        for param, (default, description) in info.params.items():
            print(f"{'':10s}   {param} = {default!r}: {description}")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from scheduler_py.model.bound import TrafficBound, traffic_bound
    from scheduler_py.model.budget import Budget
    from scheduler_py.model.io_json import load_document, nodes_from_json, result_to_json
    from scheduler_py.model.types import Problem
    from scheduler_py.scheduling.documents import plan_document

    try:
        text = sys.stdin.read() if args.input == "-" else Path(args.input).read_text()
    except OSError as error:
        raise exit_codes.CommandError(
            f"cannot read the problem file {args.input} ({error.strerror or error}); expected a "
            "problem JSON file (docs/algorithms.md), or - for stdin",
            exit_codes.NO_INPUT,
        ) from None
    document = load_document(text)
    started = time.perf_counter()
    planned = plan_document(document, args.algorithm, _parse_params(args.param))
    seconds = time.perf_counter() - started
    evaluations = [ev for _, _, ev in planned]
    cluster_load: dict[str, float] = {}
    for ev in evaluations:
        for node, load in ev.node_cpu.items():
            cluster_load[node] = cluster_load.get(node, 0.0) + load
    nodes = nodes_from_json(document["nodes"])
    budget = Budget.of(args.bound_secs)
    bounds = {t.id: traffic_bound(Problem(nodes, t), budget) for t, _, _ in planned}
    imc = sum(ev.imc_gain for ev in evaluations)
    values = [b.value for b in bounds.values()]
    bound = None if None in values else sum(v for v in values if v is not None)
    total = TrafficBound(bound, "sum over the topologies")
    summary = {
        "imc_gain": imc,
        "bound": bound,
        "gap": total.gap(imc),
        "internode_traffic": sum(ev.internode_traffic for ev in evaluations),
        "max_node_load": max(cluster_load.values(), default=0.0),
        "nodes_used": len({n for _, p, _ in planned for n in p.nodes_used}),
        "seconds": seconds,
    }
    extra = {t.id: bounds[t.id].summary(ev.imc_gain) for t, _, ev in planned}
    result = result_to_json(args.algorithm, planned, summary, extra)
    text_out = json.dumps(result, indent=2, sort_keys=False)
    if args.output:
        Path(args.output).write_text(text_out + "\n")
    else:
        print(text_out)
    gap = summary["gap"]
    gap_text = (
        f"gap ≤ {gap:.1%} of the bound {bound:.4g}"
        if gap is not None and bound is not None
        else "gap: no bound (" + "; ".join(b.reason for b in bounds.values() if b.reason) + ")"
    )
    print(
        f"{args.algorithm}: φ={imc:.4g} ({gap_text}) "
        f"inter-node traffic={summary['internode_traffic']:.4g} "
        f"max node load={summary['max_node_load']:.1f}% "
        f"nodes used={summary['nodes_used']} time={seconds * 1000:.1f} ms",
        file=sys.stderr,
    )
    return 0


def cmd_aggregate(args: argparse.Namespace) -> int:
    from scheduler_py.cli.aggregate import run

    return run(args)


def cmd_metrics(args: argparse.Namespace) -> int:
    from scheduler_py.cli.metrics import main as metrics_main

    return metrics_main(args.rest)


def cmd_placement(args: argparse.Namespace) -> int:
    from scheduler_py.cli.placement import main as table_main

    return table_main(args.rest)


def cmd_replan(args: argparse.Namespace) -> int:
    from scheduler_py.cli.operator import replan_main

    return replan_main(args.rest)


def cmd_history(args: argparse.Namespace) -> int:
    from scheduler_py.cli.operator import history_main

    return history_main(args.rest)


def cmd_trigger(args: argparse.Namespace) -> int:
    from scheduler_py.cli.operator import trigger_main

    return trigger_main(args.rest)


# subcommands with a parser of their own: name -> (one-line help, entry point)
SELF_PARSING: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "metrics": (
        "the measured CPU and traffic of a running topology (latest aggregate)",
        cmd_metrics,
    ),
    "placement": (
        "print where a running topology's executors are (Nimbus vs brain)",
        cmd_placement,
    ),
    "replan": (
        "re-plan a running topology now (--dry-run: only show the plan and its gain)",
        cmd_replan,
    ),
    "history": ("a topology's reconfiguration history", cmd_history),
    "trigger": ("pause or resume the automatic reconfiguration trigger (all or one)", cmd_trigger),
}


def cmd_dashboard(args: argparse.Namespace) -> int:
    from scheduler_py.cli.dashboard import run

    return run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scheduler-py", description="The Python brain of a drop-in Apache Storm scheduler."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the Thrift service Nimbus's shim calls")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=9627, help="port (default 9627)")
    serve.add_argument(
        "--algorithm",
        default=keys.DEFAULT_ALGORITHM,
        help="default algorithm for topologies without scheduler.brain.algorithm (default "
        f"{keys.DEFAULT_ALGORITHM})",
    )
    serve.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="parameter of the default algorithm (repeatable)",
    )
    serve.add_argument("--plan-log", help="append every decision as JSON lines to this file")
    serve.add_argument(
        "--round-budget",
        dest="round_budget_ms",
        type=duration_ms(),
        default=1500,
        metavar="DURATION",
        help="time budget of a scheduling round when the shim does not send its "
        "scheduler.brain.timeout.ms (default 1500ms); the shim's timeout minus 25%% otherwise",
    )
    serve.add_argument(  # the older name: a bare number is milliseconds
        "--round-budget-ms", dest="round_budget_ms", type=duration_ms("ms"), help=argparse.SUPPRESS
    )
    serve.add_argument(
        "--zookeeper",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="plan with measured costs: read the aggregates `scheduler-py aggregate` writes "
        "to this ZooKeeper (default: storm.zookeeper.servers and storm.zookeeper.port of the "
        "--storm-conf file; none: declared costs)",
    )
    add_monitor_root_argument(serve)
    add_storm_conf_arguments(serve, explicit_only=True)
    serve.add_argument(
        "--shim-key-file",
        help="the key the shim seals every round with (the file Nimbus's "
        "scheduler.brain.key.file names, or a copy; created, mode 0600, when missing; default "
        "$SCHEDULER_PY_SHIM_KEY_FILE, else ~/.config/scheduler-py/shim.key)",
    )
    serve.add_argument(
        "--allow-unauthenticated-rounds",
        action="store_true",
        help="also answer rounds that are not sealed (an older shim, no key file); they never "
        "drive a reconfiguration nor apply an armed plan (default: refuse them)",
    )
    serve.add_argument(
        "--require-auth-reads",
        action="store_true",
        help="reads (status, history, replan --dry-run, the dashboard's) need the operator "
        "secret as well; only ping and prove_operator_secret answer a peer without a "
        "credential (default: reads are open to local processes; docker-compose sets it)",
    )
    serve.add_argument("--log-file", help="log here instead of stderr")
    add_log_level_argument(serve)
    from scheduler_py.cli.operator import add_serve_arguments

    add_serve_arguments(serve)
    serve.set_defaults(func=cmd_serve)

    algs = sub.add_parser("algorithms", help="list registered algorithms and parameters")
    algs.set_defaults(func=cmd_algorithms)

    plan = sub.add_parser("plan", help="plan a JSON problem (see README: interchange format)")
    plan.add_argument("--algorithm", "-a", required=True)
    plan.add_argument("--input", "-i", required=True, help="problem JSON file, or - for stdin")
    plan.add_argument("--output", "-o", help="placement JSON file (default: stdout)")
    plan.add_argument(
        "--bound-secs",
        type=duration_seconds(),
        default=10.0,
        metavar="DURATION",
        help="time for the upper bound on kept traffic behind `gap` (default 10s)",
    )
    plan.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    plan.set_defaults(func=cmd_plan)

    from scheduler_py.cli.bench import add_parser as add_bench_parser

    add_bench_parser(sub)  # the benchmarks ship apart: without them it names what to install

    from scheduler_py.cli.aggregate import add_arguments as add_aggregate_arguments

    aggregate = sub.add_parser(
        "aggregate",
        help="aggregate the worker monitors' window records (PySpark) into ZooKeeper",
        description="Aggregate the window records the worker monitors publish in ZooKeeper "
        "with PySpark, and write one aggregate per running topology (see "
        "scheduler_py/monitoring/README.md).",
    )
    add_aggregate_arguments(aggregate)
    aggregate.set_defaults(func=cmd_aggregate)

    for name, (summary, command) in SELF_PARSING.items():
        # add_help=False: `-h` belongs to the subcommand's own parser; main() hands it
        # everything after its name
        own = sub.add_parser(name, help=summary, add_help=False)
        own.add_argument("rest", nargs=argparse.REMAINDER)
        own.set_defaults(func=command)

    from scheduler_py.cli.dashboard import add_arguments as add_dashboard_arguments

    dashboard = sub.add_parser(
        "dashboard", help="the web dashboard and JSON API (/api/v1) over the brain (Flask)"
    )
    add_dashboard_arguments(dashboard)
    dashboard.set_defaults(func=cmd_dashboard)
    return parser


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line parsed; a subcommand of :data:`SELF_PARSING` gets every argument
    after its name as ``rest`` (argparse's REMAINDER refuses one that starts with an option,
    as in ``replan --dry-run NAME``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] in SELF_PARSING:
        return argparse.Namespace(command=argv[0], rest=argv[1:], func=SELF_PARSING[argv[0]][1])
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status is one of :mod:`scheduler_py.cli.exit_codes`."""
    args = parse_arguments(argv)
    try:
        return args.func(args)
    except exit_codes.CommandError as error:
        status, message = error.code, error.message
    except UnknownAlgorithmError as error:
        status, message = exit_codes.USAGE, str(error)
    except SchedulingError as error:  # a problem document that is invalid or cannot be placed
        status, message = exit_codes.DATA_ERROR, str(error)
    except BrokenPipeError:  # the reader of the output stopped reading (`| head`, `| grep -q`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return exit_codes.FAILED
    except ConnectionError as error:  # Nimbus, the brain: NimbusUnreachable, BrainUnreachable
        status, message = exit_codes.UNAVAILABLE, str(error)
    except OSError as error:
        status, message = exit_codes.NO_INPUT, str(error)
    except (ValueError, ConfigValueError) as error:
        status, message = exit_codes.USAGE, str(error)
    prefix = f"scheduler-py {args.command}: "
    print(message if message.startswith("scheduler-py") else prefix + message, file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
