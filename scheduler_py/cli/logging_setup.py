"""Logging for every ``scheduler-py`` command: to stderr, or to ``--log-file``.

A ``--log-file`` is reopened when it is moved or removed (logrotate's default rename, see
docs/install.md, "Running as services"), so rotation never leaves a daemon writing into a
renamed or deleted file.

``--log-level`` takes one of :data:`LOG_LEVELS` (any case); anything else is a usage error
naming the accepted levels, never a silent fall-back to INFO.
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import sys
from pathlib import Path

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
"""The levels ``--log-level`` accepts (Python's :mod:`logging` names)."""


def log_level(text: str) -> str:
    """The ``--log-level`` argument type: ``text`` upper-cased when it is one of
    :data:`LOG_LEVELS`, else an :class:`argparse.ArgumentTypeError` naming them."""
    level = text.strip().upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(LOG_LEVELS)} (any case), found {text!r}"
        )
    return level


def add_log_level_argument(parser: argparse.ArgumentParser) -> None:
    """``--log-level`` on ``parser``, validated by :func:`log_level` (default INFO)."""
    parser.add_argument(
        "--log-level",
        type=log_level,
        default="INFO",
        metavar="LEVEL",
        help=f"one of {', '.join(LOG_LEVELS)} (default INFO)",
    )


def configure_logging(level: str, log_file: str | None) -> None:
    """Root logging at ``level`` (one of :data:`LOG_LEVELS`, any case; anything else is a
    :class:`ValueError`) to ``log_file``, else to stderr."""
    try:
        numeric = getattr(logging, log_level(level))
    except argparse.ArgumentTypeError as error:
        raise ValueError(f"log level: {error}") from None
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers = [logging.handlers.WatchedFileHandler(log_file)]
    logging.basicConfig(
        level=numeric,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
    )
