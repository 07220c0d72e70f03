"""Files that hold a credential: the brain's operator secret (``scheduler_py/service/auth.py``)
and the dashboard's bearer token (``scheduler_py/dashboard/token.py``).

One line of text, created with 256 random bits and mode 0600 (in a directory created 0700),
refused when other users can read or write it or when it is empty, compared in constant time.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from pathlib import Path


def read_private(path: Path, what: str, error: type[Exception], when_empty: str) -> str | None:
    """The credential in ``path`` (``what`` names it in messages), ``None`` when the file does
    not exist; ``error`` when others may read it, it cannot be read, or it is empty (then
    ``when_empty`` says what to do)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as problem:
        raise error(f"cannot read the {what} {path}: {problem}") from problem
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise error(
            f"the {what} {path} is open to other users (mode {stat.S_IMODE(mode):04o}); "
            f"expected 0600: run `chmod 600 {path}`"
        )
    try:
        value = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"cannot read the {what} {path}: {problem}") from problem
    if not value:
        raise error(f"the {what} {path} is empty; expected one line of text ({when_empty})")
    return value


def create_private(path: Path, what: str, error: type[Exception], fix: str) -> str | None:
    """A new credential written to ``path`` (mode 0600; missing directories 0700); ``None``
    when the file exists already (another process may have just created it); ``error`` with
    ``fix`` appended when it cannot be created."""
    value = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return None
    except OSError as problem:
        raise error(f"cannot create the {what} {path}: {problem}; {fix}") from problem
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(value + "\n")
    return value


def same_credential(expected: str, given: str | None) -> bool:
    """Constant-time comparison (:func:`hmac.compare_digest`); an empty ``given`` never matches."""
    return bool(given) and hmac.compare_digest(expected.encode(), (given or "").encode())
