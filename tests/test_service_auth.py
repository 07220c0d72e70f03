"""The operator secret (scheduler_py/service/auth.py): created once with mode 0600, found by
the tools from the variable, the file option or the default file, refused when others can
read it or it is empty."""

from __future__ import annotations

import os
import stat

import pytest

from scheduler_py.service.auth import (
    SECRET_ENV,
    SECRET_FILE_ENV,
    OperatorSecret,
    SecretError,
    default_secret_file,
    ensure_secret,
    load_secret,
)


@pytest.fixture()
def no_configured_secret(monkeypatch, tmp_path):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    monkeypatch.delenv(SECRET_FILE_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "scheduler-py" / "operator.secret"


def test_the_brain_creates_a_private_secret_once_and_the_tools_find_it(no_configured_secret):
    path = no_configured_secret
    assert default_secret_file() == path
    assert load_secret() is None
    created = ensure_secret()
    assert created.source == str(path) and len(created.value) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert ensure_secret() == created  # a restarted brain keeps it
    assert load_secret() == created


def test_the_variable_wins_over_the_file_and_the_file_option_over_the_default(
    no_configured_secret, monkeypatch, tmp_path
):
    ensure_secret()
    other = tmp_path / "other.secret"
    mine = ensure_secret(other)
    assert load_secret(other) == mine and mine.source == str(other)
    monkeypatch.setenv(SECRET_FILE_ENV, str(other))
    assert load_secret() == mine
    monkeypatch.setenv(SECRET_ENV, "from-the-environment")
    assert load_secret(other) == OperatorSecret("from-the-environment", f"${SECRET_ENV}")


def test_a_secret_file_others_can_read_is_refused_with_the_fix(no_configured_secret):
    secret = ensure_secret()
    os.chmod(secret.source, 0o644)
    with pytest.raises(SecretError, match="chmod 600"):
        load_secret()
    with pytest.raises(SecretError, match="mode 0644"):
        ensure_secret()


def test_an_empty_secret_file_is_refused(no_configured_secret):
    path = no_configured_secret
    path.parent.mkdir(parents=True)
    path.write_text("\n")
    os.chmod(path, 0o600)
    with pytest.raises(SecretError, match="empty"):
        ensure_secret()


def test_only_the_exact_secret_is_admitted():
    secret = OperatorSecret("s3cret", "test")
    assert secret.admits("s3cret")
    assert not secret.admits("s3cre") and not secret.admits("") and not secret.admits(None)
