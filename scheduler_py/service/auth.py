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
Comparison is constant-time (:func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

SECRET_ENV = "SCHEDULER_PY_SECRET"
SECRET_FILE_ENV = "SCHEDULER_PY_SECRET_FILE"
FILE_NAME = "operator.secret"


class SecretError(Exception):
    """The operator secret cannot be read or created safely (the message says how to fix it)."""


@dataclass(frozen=True)
class OperatorSecret:
    value: str
    source: str
    """where it came from, for messages (``$SCHEDULER_PY_SECRET`` or a path); never the value"""

    def admits(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(self.value.encode(), (given or "").encode())


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
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SecretError(f"cannot read the operator secret file {path}: {error}") from error
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SecretError(
            f"the operator secret file {path} is open to other users (mode "
            f"{stat.S_IMODE(mode):04o}); expected 0600: run `chmod 600 {path}`"
        )
    try:
        value = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise SecretError(f"cannot read the operator secret file {path}: {error}") from error
    if not value:
        raise SecretError(
            f"the operator secret file {path} is empty; expected one line of text (delete "
            "the file and `scheduler-py serve` creates a new one)"
        )
    return OperatorSecret(value, str(path))


def ensure_secret(explicit_file: str | os.PathLike[str] | None = None) -> OperatorSecret:
    """The brain's secret: the configured one, or a new one written to the secret file."""
    existing = load_secret(explicit_file)
    if existing is not None:
        return existing
    path = secret_file(explicit_file)
    value = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another brain created it meanwhile: use that one
        found = load_secret(explicit_file)
        if found is None:
            raise SecretError(f"the operator secret file {path} vanished while read") from None
        return found
    except OSError as error:
        raise SecretError(
            f"cannot create the operator secret file {path}: {error}; set "
            f"${SECRET_ENV}, or --secret-file PATH to a writable place"
        ) from error
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(value + "\n")
    return OperatorSecret(value, str(path))
