"""The dashboard's bearer token: what a mutating request (apply a plan) must carry, and,
with ``scheduler-py dashboard --require-token``, every request but the static files and the
login page (``scheduler_py/dashboard/access.py``).

``--token-file PATH``: read the token from PATH, or create it (256 random bits, mode 0600)
when it does not exist. Without a token file the dashboard is read-only. The file rules and the
constant-time comparison are the operator secret's (``scheduler_py/config/private_files.py``).

A browser that logged in (``/login``) carries a *session cookie* instead of the token: an
HMAC-SHA256 of :data:`SESSION_CONTEXT` under the token (:func:`session_value`), so the cookie
never holds the token itself. It lets a browser read; changing requests still need the token
as ``Authorization: Bearer`` (a cookie is sent by the browser on its own, a header is not).
"""

from __future__ import annotations

import hashlib
import hmac
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


SESSION_COOKIE = "scheduler_py_session"
SESSION_CONTEXT = b"scheduler-py dashboard session v1\n"


def session_value(token: str) -> str:
    """The session cookie's value for ``token`` (hex HMAC-SHA256 of :data:`SESSION_CONTEXT`)."""
    return hmac.new(token.encode("utf-8"), SESSION_CONTEXT, hashlib.sha256).hexdigest()


def session_matches(cookie: str | None, token: str) -> bool:
    """True when ``cookie`` is the session cookie of ``token``."""
    return bool(cookie) and same_credential(session_value(token), cookie)
