"""Every environment variable ``scheduler-py`` reads, under one prefix, ``SCHEDULER_PY_``
(docs/configuration.md, "Environment variables").

Older names are deprecated aliases: they still work, and the first read of one logs a single
WARNING naming its new name. The new name wins when both are set. Variables of other programs
that the commands honour as those programs define them (``STORM_CONF_DIR``, ``STORM_HOME``,
``XDG_CONFIG_HOME``, ``XDG_STATE_HOME``) are not ours and keep their names.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

PREFIX = "SCHEDULER_PY_"


@dataclass(frozen=True)
class EnvVar:
    name: str
    meaning: str
    deprecated: tuple[str, ...] = ()
    """older names still read, in this order, after :attr:`name`"""

    def get(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The value (stripped; an empty value counts as unset), from the new name first,
        then a deprecated alias with one WARNING per alias and process."""
        env = os.environ if environ is None else environ
        value = (env.get(self.name) or "").strip()
        if value:
            return value
        for old in self.deprecated:
            value = (env.get(old) or "").strip()
            if value:
                _warn_once(old, self.name)
                return value
        return None


BRAIN = EnvVar(
    "SCHEDULER_PY_BRAIN",
    "the brain's HOST:PORT for `replan`, `history`, `trigger` and `dashboard` when `--brain` "
    "is not given (before storm.yaml)",
    ("SCHEDULER_BRAIN",),
)
NIMBUS = EnvVar(
    "SCHEDULER_PY_NIMBUS",
    "Nimbus HOST:PORT[,HOST:PORT...] when `--nimbus` is not given (before storm.yaml; "
    "`serve` reads only its flags and `--storm-conf`)",
    ("STORM_NIMBUS", "STREAMPARSE_NIMBUS"),
)
ZOOKEEPER = EnvVar(
    "SCHEDULER_PY_ZOOKEEPER",
    "ZooKeeper HOST:PORT[,HOST:PORT...] when `--zookeeper` is not given (before storm.yaml; "
    "not read by `serve`)",
)
SECRET = EnvVar("SCHEDULER_PY_SECRET", "the operator secret itself (`replan`, `trigger`)")
SECRET_FILE = EnvVar(
    "SCHEDULER_PY_SECRET_FILE", "the operator secret's file when `--secret-file` is not given"
)
SHIM_KEY_FILE = EnvVar(
    "SCHEDULER_PY_SHIM_KEY_FILE", "the shim key's file when `serve --shim-key-file` is not given"
)
ZK_DIGEST_FILE = EnvVar(
    "SCHEDULER_PY_ZK_DIGEST_FILE", "the ZooKeeper digest credential of the Python commands"
)
ZK_WORLD_READ = EnvVar(
    "SCHEDULER_PY_ZK_WORLD_READ", "true/false: monitoring znodes readable by anyone"
)
SPARK_LOG_LEVEL = EnvVar(
    "SCHEDULER_PY_SPARK_LOG_LEVEL", "Spark's log level in `aggregate` (default ERROR)"
)
SKIP_CLUSTER = EnvVar("SCHEDULER_PY_SKIP_CLUSTER", "tests: skip the cluster tests (`1`)")

ALL: tuple[EnvVar, ...] = (
    BRAIN,
    NIMBUS,
    ZOOKEEPER,
    SECRET,
    SECRET_FILE,
    SHIM_KEY_FILE,
    ZK_DIGEST_FILE,
    ZK_WORLD_READ,
    SPARK_LOG_LEVEL,
    SKIP_CLUSTER,
)
"""Every variable, for the reference table (:func:`markdown_table`) and the tests."""

_warned: set[str] = set()


def _warn_once(old: str, new: str) -> None:
    if old in _warned:
        return
    _warned.add(old)
    log.warning("$%s is deprecated: set $%s instead (it is read for now)", old, new)


def markdown_table() -> str:
    """The reference table of docs/configuration.md."""
    rows = ["| variable | meaning | deprecated names |", "| --- | --- | --- |"]
    for var in ALL:
        old = ", ".join(f"`{name}`" for name in var.deprecated) or "—"
        rows.append(f"| `{var.name}` | {var.meaning} | {old} |")
    return "\n".join(rows)
