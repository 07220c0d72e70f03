"""``scheduler-py bench``: the benchmarks (``scheduler_py/bench/``), which ship apart from the
runtime wheel in the ``scheduler-py-bench`` distribution (``deploy/bench_dist.py``).

From a checkout (``pip install -e '.[dev]'``) or with that distribution installed, the
subcommand is the benchmarks' own command line (``scheduler_py/bench/cli.py``). Without it,
``scheduler-py bench …`` prints which distribution to install and exits
:data:`MISSING_STATUS`; every other
subcommand works as before. This is the only import of the runtime into ``bench/``
(``pyproject.toml``, the import contracts).
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from scheduler_py import __version__
from scheduler_py.cli import exit_codes

DISTRIBUTION = "scheduler-py-bench"
"""the distribution that carries ``scheduler_py.bench`` and ``scheduler_py.devtools``"""

HELP = "run a benchmark by name (or 'all'); --list shows them"

MISSING_STATUS = exit_codes.CONFIG
"""the exit status without the benchmarks: a missing extra is a configuration that cannot be
used (BSD ``sysexits.h`` EX_CONFIG, as for every command, docs/configuration.md)"""


def missing_message() -> str:
    """What ``scheduler-py bench`` says when the benchmarks are not installed."""
    return (
        f"scheduler-py bench: the benchmarks are not installed (expected the module "
        f"scheduler_py.bench of the {DISTRIBUTION} distribution); install it beside this "
        f"scheduler-py {__version__}: pip install '{DISTRIBUTION}=={__version__}' "
        "(from a checkout: pip install -e '.[dev]', as `make venv` does)"
    )


def add_parser(subcommands: Any) -> argparse.ArgumentParser:
    """The ``bench`` subcommand on ``subcommands`` (an ``add_subparsers`` result)."""
    try:
        from scheduler_py.bench.cli import DESCRIPTION, add_arguments
    except ModuleNotFoundError as error:
        if error.name not in ("scheduler_py.bench", "scheduler_py.bench.cli"):
            raise  # the benchmarks are there but something they import is not: say so
        parser = subcommands.add_parser(
            "bench",
            help=f"{HELP} (needs {DISTRIBUTION})",
            add_help=False,
            prefix_chars="\0",  # every argument, -h and --list too, reaches the message
        )
        parser.add_argument("arguments", nargs="*")
        parser.set_defaults(func=_missing)
        return parser
    parser = subcommands.add_parser("bench", help=HELP, description=DESCRIPTION, add_help=False)
    add_arguments(parser)
    parser.set_defaults(func=_run, bench_parser=parser)
    return parser


def _run(args: argparse.Namespace) -> int:
    """Run the benchmarks; SIGTERM (``kill``, a CI job's timeout) unwinds like Ctrl-C, so a
    cluster benchmark's ``finally`` stops the clusters it started
    (scheduler_py/cli/termination.py)."""
    from scheduler_py.bench.cli import run
    from scheduler_py.cli.termination import Terminated, sigterm_unwinds

    try:
        with sigterm_unwinds():
            return run(args, args.bench_parser)
    except Terminated:
        print(
            "scheduler-py bench: stopped on SIGTERM (what it started is stopped)", file=sys.stderr
        )
        return 128 + signal.SIGTERM


def _missing(_args: argparse.Namespace) -> int:
    print(missing_message(), file=sys.stderr)
    return MISSING_STATUS
