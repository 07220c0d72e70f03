"""The cluster addresses of every command that talks to the cluster: ``--storm-conf`` and the
flags that override it (docs/configuration.md, "Cluster addresses from storm.yaml").

Each address comes from the first of: its flag (``--zookeeper``, ``--nimbus``, ``--brain``,
``--monitor-root``), its ``SCHEDULER_PY_*`` variable (:mod:`scheduler_py.config.env`), Storm's
``storm.yaml`` (:mod:`scheduler_py.config.storm_conf`), the command's own default. The flags'
argparse defaults are ``None`` so that "not given" can be told from "given the default".

``serve`` is the exception (``explicit_only``): what it finds turns on measured costs and the
reconfiguration controller, which deactivates and rebalances topologies, so it reads only
its flags and a ``--storm-conf`` it is given, never a variable or a ``storm.yaml`` that
happens to be in its environment: a brain acts only on the cluster it was pointed at.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass

from scheduler_py.cli.exit_codes import CONFIG, USAGE, CommandError
from scheduler_py.config import env, keys, storm_conf
from scheduler_py.config.durations import DurationError, parse_ms, parse_seconds

log = logging.getLogger(__name__)

DEFAULT_ZOOKEEPER = "127.0.0.1:2181"
DEFAULT_NIMBUS = "127.0.0.1:6627"
DEFAULT_BRAIN = f"127.0.0.1:{keys.BRAIN_PORT.default}"


def add_storm_conf_arguments(parser: argparse.ArgumentParser, explicit_only: bool = False) -> None:
    """``--storm-conf PATH`` and ``--no-storm-conf`` (``explicit_only``: the command reads
    a storm.yaml only when ``--storm-conf`` names it, see the module's docstring)."""
    group = parser.add_mutually_exclusive_group()
    default = (
        "read only when given"
        if explicit_only
        else "default $STORM_CONF_DIR/storm.yaml, else $STORM_HOME/conf/storm.yaml, when one exists"
    )
    group.add_argument(
        "--storm-conf",
        metavar="PATH",
        help="Storm's storm.yaml, or its conf directory, for the ZooKeeper servers, the Nimbus "
        f"seeds, the brain's address and the monitoring root ({default}); flags override it",
    )
    group.add_argument(
        "--no-storm-conf",
        action="store_true",
        help="read no storm.yaml: only flags, $SCHEDULER_PY_* and the defaults",
    )


def add_nimbus_argument(parser: argparse.ArgumentParser) -> None:
    """``--nimbus`` as the commands that only read from Nimbus take it (see :func:`resolve`)."""
    parser.add_argument(
        "--nimbus",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="Nimbus, the leader of several (default $SCHEDULER_PY_NIMBUS, else storm.yaml's "
        f"nimbus.seeds and nimbus.thrift.port, else {DEFAULT_NIMBUS})",
    )


def add_zookeeper_argument(parser: argparse.ArgumentParser) -> None:
    """``--zookeeper`` as the commands that need one take it (see :func:`resolve`)."""
    parser.add_argument(
        "--zookeeper",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="default $SCHEDULER_PY_ZOOKEEPER, else storm.yaml's storm.zookeeper.servers and "
        f"storm.zookeeper.port, else {DEFAULT_ZOOKEEPER}",
    )


def add_monitor_root_argument(parser: argparse.ArgumentParser) -> None:
    """``--monitor-root`` (and the older ``--root``, kept as a hidden alias)."""
    parser.add_argument(
        "--monitor-root",
        dest="monitor_root",
        metavar="ZNODE",
        help="ZooKeeper root of the monitoring znodes (default storm.yaml's "
        f"{keys.MONITOR_ZK_ROOT.name}, else {keys.MONITOR_ZK_ROOT.default})",
    )
    parser.add_argument("--root", dest="monitor_root", help=argparse.SUPPRESS)


def load_storm_conf(args: argparse.Namespace, explicit_only: bool = False) -> storm_conf.StormConf:
    """The ``storm.yaml`` the arguments name or (unless ``explicit_only``) the environment
    points at, once per ``args``; a :class:`CommandError` (exit :data:`CONFIG`) when it cannot
    be used."""
    cached = getattr(args, "_storm_conf", None)
    if cached is not None:
        return cached
    named = getattr(args, "storm_conf", None)
    if getattr(args, "no_storm_conf", False) or (explicit_only and not named):
        conf = storm_conf.NO_STORM_CONF
    else:
        try:
            conf = storm_conf.load(named)
        except storm_conf.StormConfError as error:
            raise CommandError(str(error), CONFIG) from None
        if conf.path is not None:
            log.info("cluster addresses from %s (flags override it)", conf.path)
    args._storm_conf = conf
    return conf


@dataclass(frozen=True)
class Addresses:
    """Where a command finds the cluster; ``None``: nowhere given (the command decides)."""

    zookeeper: str | None
    nimbus: tuple[tuple[str, int], ...]
    brain: str
    monitor_root: str


def resolve(args: argparse.Namespace, explicit_only: bool = False) -> Addresses:
    """Flags, then ``SCHEDULER_PY_*``, then storm.yaml (:func:`load_storm_conf`);
    ``explicit_only``: flags, then a storm.yaml named by ``--storm-conf``."""
    from scheduler_py.nimbus.leader import parse_addresses

    def variable(var: env.EnvVar) -> str | None:
        return None if explicit_only else var.get()

    conf = load_storm_conf(args, explicit_only)
    zookeeper = getattr(args, "zookeeper", None) or variable(env.ZOOKEEPER) or conf.zookeeper()
    nimbus_text = getattr(args, "nimbus", None) or variable(env.NIMBUS)
    try:
        nimbus = parse_addresses(nimbus_text, storm_conf.NIMBUS_THRIFT_PORT) if nimbus_text else ()
    except ValueError as error:
        raise CommandError(f"--nimbus: {error}", USAGE) from None
    brain = getattr(args, "brain", None) or variable(env.BRAIN) or conf.brain() or DEFAULT_BRAIN
    root = getattr(args, "monitor_root", None) or conf.monitor_root or keys.MONITOR_ZK_ROOT.default
    return Addresses(zookeeper, nimbus or conf.nimbus(), brain, root)


def nimbus_text(addresses: tuple[tuple[str, int], ...]) -> str:
    return ",".join(f"{host}:{port}" for host, port in addresses)


def duration_ms(bare_unit: str = "s", allow_zero: bool = False):
    """An argparse type: a duration (:mod:`scheduler_py.config.durations`) in milliseconds."""

    def convert(text: str) -> int:
        try:
            return parse_ms(text, bare_unit=bare_unit, allow_zero=allow_zero)
        except DurationError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = "duration"
    return convert


def duration_seconds(bare_unit: str = "s", allow_zero: bool = False):
    """An argparse type: a duration in seconds (a float)."""

    def convert(text: str) -> float:
        try:
            return parse_seconds(text, bare_unit=bare_unit, allow_zero=allow_zero)
        except DurationError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = "duration"
    return convert
