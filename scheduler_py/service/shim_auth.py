"""Who may feed the brain a scheduling round: the shim, proven by a key the two share.

The shim (``storm_plugin/.../SnapshotSigner.java``) serializes each ``ClusterSnapshot`` with
Thrift's binary protocol and sends those bytes with an HMAC-SHA256 over them
(:data:`CONTEXT` + the bytes) as ``schedule``'s ``sealed_snapshot`` and ``mac`` arguments
(``scheduler.thrift``). The brain accepts a sealed round when

1. the MAC is right under the shim key (constant-time comparison),
2. the snapshot's ``timestamp_ms`` is within :data:`FRESH_SECS` of the brain's clock, and
3. the same MAC was not accepted before within that window (a replayed round).

The key is one line of text in a file the operator installs next to Nimbus's ``storm.yaml``
(``scheduler.brain.key.file``) and gives the brain (``scheduler-py serve --shim-key-file``);
the same file rules as the operator secret (``scheduler_py/config/private_files.py``: mode
0600, 256 random bits when ``serve`` creates it). Without ``--shim-key-file`` the brain uses
(and creates) ``$XDG_CONFIG_HOME/scheduler-py/shim.key``.

A round that is not sealed (a shim older than this brain, or one without a key file) is
refused with a ``BrainError`` that says so, unless the operator starts the brain with
``--allow-unauthenticated-rounds``: such a round is then answered, but it never reaches the
reconfiguration controller, never applies an armed plan and is not recorded as the brain's
last round (``scheduler_py/service/server.py``, ``BrainHandler.schedule``).

The answer to a sealed round is sealed with the same key (:func:`seal_reply`): the reply's
binary-protocol bytes and an HMAC-SHA256 over :data:`REPLY_CONTEXT`, the round's MAC and those
bytes (``ScheduleReply.sealed_reply`` and ``reply_mac``). The shim applies only a reply that
opens under its key and answers the round it sent (``SnapshotSigner.open``), so a process on
the brain's port without the key — an impostor while the brain is down — cannot feed Nimbus a
plan, and no reply fits another round.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.utils import deserialize, serialize

from scheduler_py.config import env
from scheduler_py.config.private_files import create_private, read_private
from scheduler_py.service.wire import wire

CONTEXT = b"scheduler-py snapshot v1\n"
"""what the MAC covers before the snapshot's bytes (the Java signer uses the same bytes)"""
REPLY_CONTEXT = b"scheduler-py reply v1\n"
"""what a reply's MAC covers before the round's MAC and the reply's bytes"""
FRESH_SECS = 120.0
"""how far a sealed snapshot's ``timestamp_ms`` may be from the brain's clock"""
KEY_FILE_NAME = "shim.key"
KEY_FILE_ENV = env.SHIM_KEY_FILE.name


class ShimAuthError(Exception):
    """A round that must not be answered (the message says what was expected and found)."""


class ShimKeyError(Exception):
    """The shim key cannot be read or created safely (the message says how to fix it)."""


def default_key_file() -> Path:
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "scheduler-py" / KEY_FILE_NAME


def key_file(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``explicit``, else ``$SCHEDULER_PY_SHIM_KEY_FILE``, else :func:`default_key_file`."""
    chosen = explicit or os.environ.get(KEY_FILE_ENV)
    return Path(chosen) if chosen else default_key_file()


@dataclass(frozen=True)
class ShimKey:
    value: bytes
    source: str
    """the file it came from, for messages; never the value"""

    def mac(self, sealed: bytes) -> bytes:
        return hmac.new(self.value, CONTEXT + sealed, hashlib.sha256).digest()

    def reply_mac(self, round_mac: bytes, sealed_reply: bytes) -> bytes:
        """The MAC of the reply ``sealed_reply`` to the round whose MAC is ``round_mac``."""
        message = REPLY_CONTEXT + round_mac + sealed_reply
        return hmac.new(self.value, message, hashlib.sha256).digest()


def load_key(path: Path) -> ShimKey | None:
    text = read_private(path, "shim key file", ShimKeyError, "delete it and restart the brain")
    return None if text is None else ShimKey(text.encode("utf-8"), str(path))


def ensure_key(explicit: str | os.PathLike[str] | None = None) -> ShimKey:
    """The brain's shim key: the one in the key file, or a new one written there (0600)."""
    path = key_file(explicit)
    found = load_key(path)
    if found is not None:
        return found
    fix = "pass --shim-key-file PATH to a writable place"
    text = create_private(path, "shim key file", ShimKeyError, fix)
    if text is None:  # another process created it meanwhile
        found = load_key(path)
        if found is None:
            raise ShimKeyError(f"the shim key file {path} vanished while read")
        return found
    return ShimKey(text.encode("utf-8"), str(path))


@dataclass
class ShimAuth:
    """What a ``schedule`` call must show before its round may feed the controller."""

    key: ShimKey | None
    """``None``: no sealed round can be checked (every round is unauthenticated)"""
    allow_unauthenticated: bool = False
    """answer unsealed rounds (never trusted); otherwise refuse them"""
    fresh_secs: float = FRESH_SECS
    clock: Callable[[], float] = time.time
    warned_unauthenticated: bool = False
    """whether the server has logged its one WARNING about an allowed unauthenticated round"""
    _seen: dict[bytes, float] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def admit(self, snapshot: Any, sealed: bytes | None, mac: bytes | None) -> tuple[Any, bool]:
        """The round's snapshot and whether it is the shim's (``True``) or an unauthenticated
        round the operator allowed (``False``); :class:`ShimAuthError` when refused."""
        if sealed is None and mac is None:
            if self.allow_unauthenticated:
                return snapshot, False
            raise ShimAuthError(self._unsealed_message())
        if self.key is None:
            raise ShimAuthError(
                "a sealed round, but this brain has no shim key to check it with; expected "
                "`scheduler-py serve --shim-key-file PATH` with the file Nimbus's "
                "scheduler.brain.key.file names"
            )
        if not sealed or not mac:
            raise ShimAuthError(
                "expected both the sealed snapshot and its MAC, found "
                f"{'no snapshot bytes' if not sealed else 'no MAC'}"
            )
        if not hmac.compare_digest(self.key.mac(sealed), mac):
            raise ShimAuthError(
                "its MAC does not match: expected an HMAC-SHA256 under the "
                f"shim key in {self.key.source}; is Nimbus's scheduler.brain.key.file a copy "
                "of that file?"
            )
        decoded = open_sealed(sealed)
        self._check_fresh(decoded, mac)
        return decoded, True

    def _check_fresh(self, snapshot: Any, mac: bytes) -> None:
        now = self.clock()
        stamp = getattr(snapshot, "timestamp_ms", None)
        if not isinstance(stamp, int) or abs(now - stamp / 1000) > self.fresh_secs:
            raise ShimAuthError(
                f"a sealed round with timestamp_ms {stamp!r}: expected one within "
                f"{self.fresh_secs:g} s of the brain's clock ({int(now * 1000)}); a replayed "
                "round, or the clocks of Nimbus's and the brain's hosts differ"
            )
        with self._lock:
            for old, seen_at in list(self._seen.items()):
                if now - seen_at > 2 * self.fresh_secs:
                    del self._seen[old]
            if mac in self._seen:
                raise ShimAuthError(
                    f"a replayed round (round {getattr(snapshot, 'round', '?')}, the "
                    "same sealed snapshot was accepted before)"
                )
            self._seen[mac] = now

    def _unsealed_message(self) -> str:
        where = f"the key in {self.key.source}" if self.key else "the brain's shim key"
        return (
            "an unauthenticated round: expected a snapshot sealed with "
            f"{where} (Nimbus's storm.yaml: scheduler.brain.key.file, a shim of this "
            "version); found none. Upgrade the shim jar and set the key file, or start the "
            "brain with --allow-unauthenticated-rounds (such rounds are answered but never "
            "drive a reconfiguration)"
        )


def open_sealed(sealed: bytes) -> Any:
    """The ``ClusterSnapshot`` in a sealed round's bytes (:class:`ShimAuthError` if none)."""
    try:
        return deserialize(wire().ClusterSnapshot(), sealed, TBinaryProtocolFactory())
    except Exception as error:  # the MAC was right: the shim sent bytes we cannot read
        raise ShimAuthError(
            "the sealed snapshot is not a binary-protocol ClusterSnapshot "
            f"({type(error).__name__}: {str(error)[:120]}); expected the shim's scheduler.thrift"
        ) from error


def seal_reply(reply: Any, key: ShimKey, round_mac: bytes) -> Any:
    """``reply`` (a ``ScheduleReply``) sealed for the round whose MAC is ``round_mac``: its plans
    and version serialized as ``sealed_reply`` with their ``reply_mac``, and no plans outside."""
    inner = wire().ScheduleReply(plans=reply.plans, brain_version=reply.brain_version)
    data = serialize(inner, TBinaryProtocolFactory())
    return wire().ScheduleReply(
        plans=[],
        brain_version=reply.brain_version,
        sealed_reply=data,
        reply_mac=key.reply_mac(round_mac, data),
    )


def open_reply(reply: Any, key: ShimKey, round_mac: bytes) -> Any:
    """The plans of a reply sealed for the round whose MAC is ``round_mac`` — what the shim's
    ``SnapshotSigner.open`` does, for Python clients and tests; :class:`ShimAuthError` when it
    is not sealed, or not by ``key`` for that round."""
    data, mac = getattr(reply, "sealed_reply", None), getattr(reply, "reply_mac", None)
    if not data or not mac:
        raise ShimAuthError(
            "expected a reply sealed with the shim key (sealed_reply and reply_mac), found "
            "an unsealed one: an older brain, or a peer without the key on the brain's port"
        )
    if not hmac.compare_digest(key.reply_mac(round_mac, data), mac):
        raise ShimAuthError(
            f"the reply's MAC does not match: expected an HMAC-SHA256 under the shim key in "
            f"{key.source} over this round's MAC and the reply; a peer without the key, or a "
            "reply to another round"
        )
    return deserialize(wire().ScheduleReply(), data, TBinaryProtocolFactory())
