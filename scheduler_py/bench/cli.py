"""Command line of the benchmarks: ``python -m scheduler_py.bench NAME|all [options]``.

The project CLI wires this in as ``scheduler-py bench NAME`` and ``make bench``::

    python -m scheduler_py.bench --list
    python -m scheduler_py.bench paper000_optimality --seed 0 --output-dir bench-results
    python -m scheduler_py.bench all --quick
    python -m scheduler_py.bench optimality --set graphs=500 --set algorithms=td,tdls
    python -m scheduler_py.bench optimality,throughput,micro

A name may be abbreviated to any unique part of it (``optimality``, ``throughput``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from scheduler_py.bench.checkout import CheckoutMissing
from scheduler_py.bench.registry import BenchmarkInfo, BenchOptions, SettingError, benchmarks

CHECKOUT_MISSING_STATUS = 78
"""a cluster benchmark run without the checkout it needs (scheduler_py/bench/checkout.py): an
unusable configuration, EX_CONFIG as every scheduler-py command uses it
(scheduler_py/cli/exit_codes.py, which this layer does not import)"""

DESCRIPTION = (
    "Run a benchmark that reproduces a paper's evaluation or checks one of our targets; "
    "prints our numbers beside the paper's and writes <output-dir>/<name>.png and .json."
)


class _HelpWithBenchmarks(argparse.Action):
    """``-h/--help``: the options, then every registered benchmark (loaded only now)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show this help and the benchmarks")

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        parser.print_help()
        print("\nbenchmarks:")
        list_benchmarks(benchmarks())
        parser.exit()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The benchmark options, on this module's parser and on ``scheduler-py bench``'s (which
    must be created with ``add_help=False``: ``-h`` here also lists the benchmarks)."""
    parser.add_argument("-h", "--help", action=_HelpWithBenchmarks)
    parser.add_argument(
        "name",
        nargs="?",
        help="benchmark name (or a unique part of it), several separated by commas, or 'all'",
    )
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--quick", action="store_true", help="reduced sizes (smoke test)")
    parser.add_argument("--seed", type=int, default=0, help="base random seed (default 0)")
    parser.add_argument(
        "--output-dir",
        type=Path,
        default=Path("bench-results"),
        help="where PNG and JSON files go (default: bench-results)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="benchmark-specific option, repeatable (e.g. graphs=500, algorithms=td,tl, "
        "params.tl.key=rs); each benchmark's module docstring lists its keys; durations "
        "(warmup, interval, time limits) take 30s, 500ms, 2m, a bare number is seconds",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scheduler-py bench", description=DESCRIPTION, add_help=False
    )
    add_arguments(parser)
    return parser


def list_benchmarks(known: dict[str, BenchmarkInfo]) -> None:
    for info in known.values():
        print(f"  {info.name:24s} {info.paper}\n  {'':24s} {info.summary}")


def resolve(name: str, known: dict[str, BenchmarkInfo]) -> list[BenchmarkInfo]:
    """The benchmarks ``name`` selects: ``all``, an exact name, a unique substring, or a
    comma-separated list of those."""
    if name == "all":
        return list(known.values())
    if "," in name:
        selected = [info for part in name.split(",") if part for info in resolve(part, known)]
        return list({info.name: info for info in selected}.values())
    if name in known:
        return [known[name]]
    matches = [info for key, info in known.items() if name in key]
    if len(matches) == 1:
        return matches
    if matches:
        raise KeyError(
            f"benchmark name {name!r} is ambiguous: {', '.join(m.name for m in matches)}"
        )
    raise KeyError(f"unknown benchmark {name!r}; expected 'all' or one of: {', '.join(known)}")


def main(argv: list[str] | None = None) -> int:
    """Run one benchmark or all of them; returns the process exit code (2 = usage error)."""
    parser = _parser()
    return run(parser.parse_args(argv), parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run what parsed ``args`` (of :func:`add_arguments`) select."""
    known = benchmarks()
    if args.list or not args.name:
        if not args.list:
            print("error: name a benchmark (or 'all'); the benchmarks are:", file=sys.stderr)
        list_benchmarks(known)
        return 0 if args.list else 2
    extra: dict[str, str] = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--set expects KEY=VALUE, got {item!r}")
        extra[key.strip()] = value.strip()
    try:
        selected = resolve(args.name, known)
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return 2
    options = BenchOptions(
        output_dir=args.output_dir, seed=args.seed, quick=args.quick, extra=extra
    )
    for info in selected:
        started = time.perf_counter()
        try:
            info.run(options)
        except SettingError as error:
            print(f"error: {info.name}: {error}", file=sys.stderr)
            return 2
        except CheckoutMissing as error:
            print(f"error: {info.name}: {error}", file=sys.stderr)
            return CHECKOUT_MISSING_STATUS
        print(f"({info.name} took {time.perf_counter() - started:.1f} s)", flush=True)
    return 0
