"""The dashboard's bearer token: what a mutating request (apply a plan) must carry.

``--token-file PATH``: read the token from PATH, or create it (256 random bits, mode 0600)
when it does not exist. Without a token file the dashboard is read-only. Comparison is
constant-time (:func:`hmac.compare_digest`), as ``scheduler_py/service/auth.py`` does for the
brain's operator secret.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from pathlib import Path


class TokenError(Exception):
    """The token file cannot be read or created safely (the message says how to fix it)."""


def load_or_create_token(path: Path) -> str:
    """The token in ``path``; a new one written there (mode 0600) when it is missing."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read(path)
    except OSError as error:
        raise TokenError(
            f"cannot create the dashboard token file {path}: {error}; expected a writable "
            "path for --token-file"
        ) from error
    value = secrets.token_urlsafe(32)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(value + "\n")
    return value


def _read(path: Path) -> str:
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenError(
            f"the dashboard token file {path} is open to other users (mode "
            f"{stat.S_IMODE(mode):04o}); expected 0600: run `chmod 600 {path}`"
        )
    try:
        value = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise TokenError(f"cannot read the dashboard token file {path}: {error}") from error
    if not value:
        raise TokenError(
            f"the dashboard token file {path} is empty; expected one line of text (delete it "
            "and the dashboard creates a new one)"
        )
    return value


def bearer_matches(header: str | None, token: str) -> bool:
    """True when ``header`` is ``Bearer <token>``."""
    scheme, _, given = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())
