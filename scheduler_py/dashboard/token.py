"""The dashboard's bearer token: what a mutating request (apply a plan) must carry.

``--token-file PATH``: read the token from PATH, or create it (256 random bits, mode 0600)
when it does not exist. Without a token file the dashboard is read-only. The file rules and the
constant-time comparison are the operator secret's (``scheduler_py/config/private_files.py``).
"""

from __future__ import annotations

from pathlib import Path

from scheduler_py.config.private_files import create_private, read_private, same_credential

WHAT = "dashboard token file"


class TokenError(Exception):
    """The token file cannot be read or created safely (the message says how to fix it)."""


def load_or_create_token(path: Path) -> str:
    """The token in ``path``; a new one written there (mode 0600) when it is missing."""
    for _ in range(2):  # created by another process between the two calls: read it
        value = read_private(
            path, WHAT, TokenError, "delete it and the dashboard creates a new one"
        )
        if value is not None:
            return value
        fix = "expected a writable path for --token-file"
        value = create_private(path, WHAT, TokenError, fix)
        if value is not None:
            return value
    raise TokenError(f"the {WHAT} {path} vanished while read")


def bearer_matches(header: str | None, token: str) -> bool:
    """True when ``header`` is ``Bearer <token>``."""
    scheme, _, given = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return False
    return same_credential(token, given.strip())
