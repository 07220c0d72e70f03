"""Who may write the monitoring znodes: ZooKeeper digest ACLs (``docs/monitoring-format.md``
§3 is the layout).

Aggregates steer the automatic trigger and the rounds' measured costs, and live counters tell
the drain-out when a deactivated topology is empty (``scheduler_py/reconfig/execution.py``):
anyone who can write them can fire a reconfiguration or end a drain early. With a
*credential* configured, every znode our processes create carries the ACL
``digest:<user>:<hash>`` with every permission (:meth:`Credential.acl`) and, unless turned
off, ``world:anyone`` with READ only; every client authenticates with the credential
(``addauth digest``). An
unauthenticated client can then read (or not) but neither create, change nor delete them.

The credential is a file holding one line ``user:password`` (mode 0600; only its first line
counts). Where it is configured:

- worker monitors (Java, ``storm_plugin/.../monitor/ZkAcl.java``):
  ``scheduler.monitor.zk.digest.file`` and ``scheduler.monitor.zk.world.read`` in the
  supervisors' ``storm.yaml`` (or the topology's conf);
- the Python commands (``serve``, ``aggregate``, ``dashboard``, ``metrics``): the environment
  variables :data:`DIGEST_FILE_ENV` and :data:`WORLD_READ_ENV`, read when a client connects
  (``scheduler_py/monitoring/zk.py``).

Off when no file is configured (the default): a cluster's worker hosts need the file first,
so turning it on by default would stop every existing cluster's monitors from publishing.
Znodes created before the credential was configured keep their open ACL: delete
``<root>`` once (``zkCli.sh deleteall /scheduler-py``) when turning it on.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from kazoo.security import ACL, Id, Permissions

from scheduler_py.config import env, keys
from scheduler_py.config.private_files import read_private

DIGEST_FILE_ENV = env.ZK_DIGEST_FILE.name
"""the Python commands' :data:`keys.MONITOR_ZK_DIGEST_FILE`"""
WORLD_READ_ENV = env.ZK_WORLD_READ.name
"""the Python commands' :data:`keys.MONITOR_ZK_WORLD_READ` (``true``/``false``)"""


EXPECTED = "one line user:password (mode 0600)"


class CredentialError(ValueError):
    """The configured credential file cannot be used (the message says why)."""


@dataclass(frozen=True)
class Credential:
    """A ZooKeeper digest credential and whether the world may still read."""

    user: str
    password: str
    world_read: bool = True

    @property
    def auth(self) -> tuple[str, str]:
        """kazoo's ``auth_data`` entry (``addauth digest user:password``)."""
        return ("digest", f"{self.user}:{self.password}")

    def digest_id(self) -> str:
        """``user:base64(sha1(user:password))``, the id ZooKeeper's digest provider matches."""
        hashed = hashlib.sha1(f"{self.user}:{self.password}".encode()).digest()
        return f"{self.user}:{base64.b64encode(hashed).decode()}"

    def acl(self) -> list[ACL]:
        """The ACL of every znode we create: the credential may do anything, the world may
        read when :attr:`world_read`."""
        entries = [ACL(Permissions.ALL, Id("digest", self.digest_id()))]
        if self.world_read:
            entries.append(ACL(Permissions.READ, Id("world", "anyone")))
        return entries


def load(path: Path, world_read: bool = True) -> Credential:
    """The credential in ``path`` (first line ``user:password``), read as every credential
    file of ours is (:func:`~scheduler_py.config.private_files.read_private`: refused when
    other users may read it)."""
    text = read_private(path, "ZooKeeper credential file", CredentialError, EXPECTED)
    if text is None:
        raise CredentialError(
            f"cannot read the ZooKeeper credential file {path}: it does not exist; expected a "
            f"file holding {EXPECTED}"
        )
    line = text.splitlines()[0].strip()
    user, _, password = line.partition(":")
    if not user or not password:
        raise CredentialError(
            f"the ZooKeeper credential file {path} must hold {EXPECTED}, found no user or no "
            "password"
        )
    return Credential(user, password, world_read)


def from_environment() -> Credential | None:
    """The Python commands' credential (:data:`DIGEST_FILE_ENV`), or ``None`` when unset."""
    path = os.environ.get(DIGEST_FILE_ENV, "").strip()
    if not path:
        return None
    raw = os.environ.get(WORLD_READ_ENV, "").strip().lower()
    if raw not in ("", "true", "false"):
        raise CredentialError(f"{WORLD_READ_ENV} must be true or false, found {raw!r}")
    default = keys.MONITOR_ZK_WORLD_READ.default
    return load(Path(path), default if raw == "" else raw == "true")
