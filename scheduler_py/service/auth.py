"""The operator secret: what a brain call that changes a running topology must carry.

``scheduler-py replan`` (without ``--dry-run``) deactivates, re-assigns and restarts a
production topology, so the brain accepts it only with the operator secret; read-only calls
(``ping``, ``history``, a dry-run ``replan``) and the shim's scheduling round need none.

Where the secret comes from, first match wins, for the brain and for the operator's tools
alike:

1. ``$SCHEDULER_PY_SECRET``: the secret itself;
2. the file ``--secret-file PATH`` or ``$SCHEDULER_PY_SECRET_FILE`` names;
3. the default file ``$XDG_CONFIG_HOME/scheduler-py/operator.secret``
   (``~/.config/scheduler-py/operator.secret``).

``scheduler-py serve`` creates the file when no secret is configured (256 random bits, mode
0600, in a 0700 directory), so the operator on the brain's host, as the brain's user, needs
no set-up and other users cannot read it. A secret file that others can read is refused.
The file rules and the constant-time comparison: ``scheduler_py/config/private_files.py``.

Before an operator tool sends the secret it asks the brain to prove it holds it
(:func:`secret_proof` over a fresh random challenge, ``scheduler_py/service/client.py``), so an
impostor on the brain's port — while the brain is down — learns nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path

from scheduler_py.config import env
from scheduler_py.config.private_files import create_private, read_private, same_credential

SECRET_ENV = env.SECRET.name
SECRET_FILE_ENV = env.SECRET_FILE.name
FILE_NAME = "operator.secret"


class SecretError(Exception):
    """The operator secret cannot be read or created safely (the message says how to fix it)."""


@dataclass(frozen=True)
class OperatorSecret:
    value: str
    source: str
    """where it came from, for messages (``$SCHEDULER_PY_SECRET`` or a path); never the value"""

    def admits(self, given: str | None) -> bool:
        return same_credential(self.value, given)

    def proof(self, challenge: bytes) -> str:
        """What the brain answers to ``prove_operator_secret(challenge)``."""
        return secret_proof(self.value, challenge)


PROOF_CONTEXT = b"scheduler-py brain proof v1\n"
CHALLENGE_BYTES = (16, 64)
"""the shortest and longest challenge the brain answers"""


def secret_proof(secret: str, challenge: bytes) -> str:
    """Hex HMAC-SHA256 under ``secret`` of :data:`PROOF_CONTEXT` + ``challenge``: how a brain
    shows it holds the operator secret without sending it (``scheduler.thrift``,
    ``prove_operator_secret``); operator tools check it before they send the secret."""
    digest = hmac.new(secret.encode("utf-8"), PROOF_CONTEXT + challenge, hashlib.sha256)
    return digest.hexdigest()


def default_secret_file() -> Path:
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "scheduler-py" / FILE_NAME


def secret_file(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The secret file in effect: ``explicit``, else ``$SCHEDULER_PY_SECRET_FILE``, else the
    default."""
    chosen = explicit or os.environ.get(SECRET_FILE_ENV)
    return Path(chosen) if chosen else default_secret_file()


def load_secret(explicit_file: str | os.PathLike[str] | None = None) -> OperatorSecret | None:
    """The configured secret, or ``None`` when there is none (no variable, no file)."""
    from_env = os.environ.get(SECRET_ENV, "").strip()
    if from_env:
        return OperatorSecret(from_env, f"${SECRET_ENV}")
    path = secret_file(explicit_file)
    value = read_private(
        path,
        "operator secret file",
        SecretError,
        "delete the file and `scheduler-py serve` creates a new one",
    )
    if value is None:
        return None
    return OperatorSecret(value, str(path))


def ensure_secret(explicit_file: str | os.PathLike[str] | None = None) -> OperatorSecret:
    """The brain's secret: the configured one, or a new one written to the secret file."""
    existing = load_secret(explicit_file)
    if existing is not None:
        return existing
    path = secret_file(explicit_file)
    fix = f"set ${SECRET_ENV}, or --secret-file PATH to a writable place"
    value = create_private(path, "operator secret file", SecretError, fix)
    if value is None:  # another brain created it meanwhile: use that one
        found = load_secret(explicit_file)
        if found is None:
            raise SecretError(f"the operator secret file {path} vanished while read")
        return found
    return OperatorSecret(value, str(path))
