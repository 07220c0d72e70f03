"""Storm's own ``storm.yaml``: where every ``scheduler-py`` command that talks to the cluster
finds ZooKeeper, Nimbus, the brain and the monitoring root (docs/configuration.md, "Cluster
addresses from storm.yaml").

Which file: ``--storm-conf PATH`` (a file, or a conf directory holding ``storm.yaml``), else
``$STORM_CONF_DIR/storm.yaml``, else ``$STORM_HOME/conf/storm.yaml``, the first that exists (the
order Storm's own ``bin/storm`` launcher uses). The keys read, with Storm's defaults
(``defaults.yaml`` of storm-client):

- ``storm.zookeeper.servers`` (hosts) and ``storm.zookeeper.port`` (2181);
- ``nimbus.seeds`` (hosts, tried in order for the leader) and ``nimbus.thrift.port`` (6627);
  the deprecated ``nimbus.host`` when no seeds are given, as Storm's ``NimbusClient`` does;
- ``scheduler.brain.host`` / ``scheduler.brain.port`` (the shim's keys,
  :mod:`scheduler_py.config.keys`) and ``scheduler.monitor.zk.root``.

``storm.zookeeper.root`` is Storm's own subtree; the monitoring znodes live under
``scheduler.monitor.zk.root`` beside it, so the former is not needed here.

A key that is absent stays ``None``: a command then uses its flag or its own default, and a
flag always wins over the file. The file is read with ``yaml.safe_load``; a file that is not
YAML, not a mapping, or holds a value of the wrong type is a :class:`StormConfError` naming
the file, the key, what was expected and what to do.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_py.config import keys
from scheduler_py.config.values import ConfigValueError

STORM_YAML = "storm.yaml"
ZOOKEEPER_PORT = 2181
"""``storm.zookeeper.port``'s default in Storm's defaults.yaml."""
NIMBUS_THRIFT_PORT = 6627
"""``nimbus.thrift.port``'s default in Storm's defaults.yaml."""


class StormConfError(ConfigValueError):
    """A ``storm.yaml`` that cannot be used: missing when named, not YAML, or a key of the
    wrong type. ``str(error)`` names the file, what was expected and what to do."""


@dataclass(frozen=True)
class StormConf:
    """What the commands use from one ``storm.yaml`` (``None``: the key is absent)."""

    path: Path | None
    zookeeper_servers: tuple[str, ...] | None = None
    zookeeper_port: int | None = None
    nimbus_seeds: tuple[str, ...] | None = None
    nimbus_port: int | None = None
    brain_host: str | None = None
    brain_port: int | None = None
    monitor_root: str | None = None

    def zookeeper(self) -> str | None:
        """Kazoo's connection string, ``"zk1:2181,zk2:2181"``; ``None`` without servers. A
        server written as ``host:port`` keeps its own port."""
        if not self.zookeeper_servers:
            return None
        port = self.zookeeper_port or ZOOKEEPER_PORT
        return ",".join(
            server if _has_port(server) else f"{server}:{port}" for server in self.zookeeper_servers
        )

    def nimbus(self) -> tuple[tuple[str, int], ...]:
        """The Nimbus seeds as ``(host, port)``, in the file's order; empty without seeds."""
        port = self.nimbus_port or NIMBUS_THRIFT_PORT
        return tuple((seed, port) for seed in self.nimbus_seeds or ())

    def brain(self) -> str | None:
        """``HOST:PORT`` of the brain as the shim reaches it; ``None`` when neither key is
        set. A wildcard host (``0.0.0.0``) is reached on this host."""
        if self.brain_host is None and self.brain_port is None:
            return None
        host = self.brain_host or keys.BRAIN_HOST.default
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        return f"{host}:{self.brain_port or keys.BRAIN_PORT.default}"


NO_STORM_CONF = StormConf(None)
"""No ``storm.yaml`` found (or ``--no-storm-conf``): every value from flags and defaults."""


def _has_port(server: str) -> bool:
    host, sep, port = server.rpartition(":")
    return bool(sep and host and port.isdigit() and ":" not in host)


def locate(explicit: str | None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The ``storm.yaml`` to read: ``explicit`` (a file, or a directory holding
    ``storm.yaml``; it must exist), else ``$STORM_CONF_DIR/storm.yaml``, else
    ``$STORM_HOME/conf/storm.yaml`` when it exists; ``None`` when there is none."""
    if explicit:
        path = Path(explicit).expanduser()
        if path.is_dir():
            path = path / STORM_YAML
        if not path.is_file():
            raise StormConfError(
                f"--storm-conf {explicit}: no such file ({path}); expected Storm's storm.yaml "
                "or the conf directory that holds it (e.g. /opt/storm/conf), or leave "
                "--storm-conf out to use $STORM_CONF_DIR or $STORM_HOME/conf"
            )
        return path
    env = os.environ if environ is None else environ
    candidates = []
    if env.get("STORM_CONF_DIR"):
        candidates.append(Path(env["STORM_CONF_DIR"]) / STORM_YAML)
    if env.get("STORM_HOME"):
        candidates.append(Path(env["STORM_HOME"]) / "conf" / STORM_YAML)
    return next((path for path in candidates if path.is_file()), None)


def parse(text: str, path: Path | None) -> StormConf:
    """The values of one ``storm.yaml``'s text (``path`` names it in errors)."""
    import yaml

    where = str(path) if path else "storm.yaml"
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise StormConfError(
            f"{where} is not valid YAML ({_first_line(error)}); expected Storm's storm.yaml "
            "(KEY: VALUE lines); fix the file, or point --storm-conf at another one"
        ) from None
    if document is None:  # Storm ships a storm.yaml that is all comments
        return StormConf(path)
    if not isinstance(document, dict):
        raise StormConfError(
            f"{where}: expected a mapping of Storm keys (KEY: VALUE lines), found a "
            f"{type(document).__name__}; fix the file, or point --storm-conf at another one"
        )
    reader = _Reader(document, where)
    seeds = reader.hosts("nimbus.seeds")
    if seeds is None:
        legacy = reader.host("nimbus.host")
        seeds = (legacy,) if legacy else None
    return StormConf(
        path,
        zookeeper_servers=reader.hosts("storm.zookeeper.servers"),
        zookeeper_port=reader.port("storm.zookeeper.port"),
        nimbus_seeds=seeds,
        nimbus_port=reader.port("nimbus.thrift.port"),
        brain_host=reader.host(keys.BRAIN_HOST.name),
        brain_port=reader.port(keys.BRAIN_PORT.name),
        monitor_root=reader.host(keys.MONITOR_ZK_ROOT.name),
    )


def load(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> StormConf:
    """The ``storm.yaml`` :func:`locate` finds, parsed; :data:`NO_STORM_CONF` when none."""
    path = locate(explicit, environ)
    if path is None:
        return NO_STORM_CONF
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise StormConfError(
            f"cannot read {path} ({error}); expected a readable Storm storm.yaml: fix its "
            "permissions, or point --storm-conf at another one"
        ) from None
    return parse(text, path)


def _first_line(error: Exception) -> str:
    return " ".join(str(error).split())


class _Reader:
    """Typed reads of one document, each failure naming the file and the key."""

    def __init__(self, document: dict[Any, Any], where: str) -> None:
        self.document = document
        self.where = where

    def _refuse(self, key: str, expected: str, found: Any) -> StormConfError:
        return StormConfError(
            f"{self.where}: {key} must be {expected}, found {found!r}; fix that line of the "
            "file (Storm reads the same value), or point --storm-conf at another file "
            "(--no-storm-conf: read none)"
        )

    def hosts(self, key: str) -> tuple[str, ...] | None:
        value = self.document.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not value:
            raise self._refuse(key, 'a non-empty YAML list of hosts, e.g. ["zk1", "zk2"]', value)
        for item in value:
            if not isinstance(item, str) or not item.strip() or any(c.isspace() for c in item):
                raise self._refuse(key, "a list of host names", value)
        return tuple(item.strip() for item in value)

    def host(self, key: str) -> str | None:
        value = self.document.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self._refuse(key, "a non-empty string", value)
        return value.strip()

    def port(self, key: str) -> int | None:
        value = self.document.get(key)
        if value is None:
            return None
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
            raise self._refuse(key, "a port number, 1..65535", value)
        return value
