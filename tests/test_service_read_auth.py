"""``serve --require-auth-reads``: the brain answers reads (``status``, ``history``, a dry-run
``replan``) only with the operator secret, and the tools send it once the brain proved it
holds it (scheduler_py/service/server.py ``_authorise_read``, scheduler_py/service/client.py).
Without the option reads stay open, as before."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from scheduler_py.cli.operator import history_main, replan_main
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service import client as client_module
from scheduler_py.service.auth import SECRET_ENV, SECRET_FILE_ENV, OperatorSecret, secret_proof
from scheduler_py.service.client import (
    BrainNotProven,
    brain_client,
    call_brain,
)
from scheduler_py.service.server import BrainHandler, serve
from scheduler_py.service.shim_auth import ShimAuth
from scheduler_py.service.wire import wire
from tests.brain_server import serve_brain

SECRET = "the-operators-secret"


class _Controller:
    """Records what reached it; answers a history and a dry run."""

    def __init__(self) -> None:
        self.replans: list[tuple[str, bool]] = []
        self.histories: list[str] = []

    def replan(self, topology, algorithm, dry_run, params) -> dict:
        self.replans.append((topology, dry_run))
        return {"topology": topology, "dry_run": dry_run}

    def history_of(self, topology) -> list:
        self.histories.append(topology)
        return [{"id": "r-1", "topology": topology, "state": "completed"}]

    def trigger_state(self) -> dict:
        return {"controller": True, "enabled": True, "paused": False, "paused_topologies": {}}

    def armed(self) -> None:
        return None


@pytest.fixture(autouse=True)
def _no_secret_from_the_environment(monkeypatch, tmp_path):
    """Each test says where its tools find the secret; none from the developer's home, and no
    brain remembered from another test."""
    monkeypatch.delenv(SECRET_ENV, raising=False)
    monkeypatch.setenv(SECRET_FILE_ENV, str(tmp_path / "no-such.secret"))
    monkeypatch.setattr(client_module, "_reads_need_secret", set())


def _brain(reads_need_secret: bool = True, secret: str = SECRET):
    controller = _Controller()
    handler = BrainHandler(
        RoundConfig(), None, controller, OperatorSecret(secret, "the test's secret"),
        reads_need_secret=reads_need_secret,
    )  # fmt: skip
    server, address = serve_brain(handler)
    return server, address, controller


def _refusal(call) -> Any:
    with pytest.raises(wire().BrainError) as refused:
        call()
    return refused.value


def test_every_read_without_the_secret_is_refused_naming_what_is_expected(caplog):
    server, address, controller = _brain()
    client = brain_client(address)
    try:
        with caplog.at_level(logging.WARNING, logger="scheduler_py.service.server"):
            for call in (
                lambda: client.status(),
                lambda: client.status(""),
                lambda: client.history("wc"),
                lambda: client.replan("wc", "", True, "", ""),
                lambda: client.history("wc", "a guess"),
            ):
                error = _refusal(call)
                assert error.needs_operator_secret is True
                assert "--require-auth-reads" in error.message
                assert "the test's secret" in error.message, error.message
        assert "found a different one" in error.message
        assert controller.replans == [] and controller.histories == []
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 5 and all("without the operator secret" in w for w in warnings)
        # the connection stays usable: ping and the proof answer anyone, and tell nothing
        assert client.ping()
        challenge = os.urandom(32)
        assert client.prove_operator_secret(challenge) == secret_proof(SECRET, challenge)
        # with the secret the same calls are answered
        assert json.loads(client.status(SECRET))["trigger"]["controller"] is True
        assert json.loads(client.history("wc", SECRET))[0]["id"] == "r-1"
        assert json.loads(client.replan("wc", "", True, SECRET, ""))["dry_run"] is True
        assert controller.replans == [("wc", True)] and controller.histories == ["wc"]
    finally:
        client.close()
        server.close()


def test_without_the_option_reads_stay_open():
    server, address, _ = _brain(reads_need_secret=False)
    try:
        assert "trigger" in json.loads(call_brain(address, "status"))
        assert json.loads(call_brain(address, "history", "wc"))[0]["id"] == "r-1"
        report = json.loads(call_brain(address, "replan", "wc", "", True, "", ""))
        assert report["dry_run"] is True
    finally:
        server.close()


def test_the_client_proves_the_brain_then_reads_with_the_secret_and_remembers():
    server, address, controller = _brain()
    asked: list[int] = []

    def read_secret() -> str:
        asked.append(1)
        return SECRET

    try:
        status = json.loads(call_brain(address, "status", read_secret=read_secret))
        assert status["trigger"]["controller"] is True
        assert address in client_module._reads_need_secret
        history = json.loads(call_brain(address, "history", "wc", read_secret=read_secret))
        assert history[0]["topology"] == "wc"
        report = json.loads(
            call_brain(address, "replan", "wc", "", True, "", "", read_secret=read_secret)
        )
        assert report["dry_run"] is True and controller.replans == [("wc", True)]
        assert len(asked) == 3
    finally:
        server.close()


def test_a_client_without_the_secret_gets_the_brains_refusal():
    server, address, _ = _brain()
    try:
        error = _refusal(lambda: call_brain(address, "status", read_secret=lambda: None))
        assert error.needs_operator_secret is True and "--require-auth-reads" in error.message
        # the default reader: $SCHEDULER_PY_SECRET / the secret file (none here)
        assert _refusal(lambda: call_brain(address, "history", "wc")).needs_operator_secret
    finally:
        server.close()


def test_the_default_reader_takes_the_secret_from_the_environment(monkeypatch):
    server, address, _ = _brain()
    monkeypatch.setenv(SECRET_ENV, SECRET)
    try:
        assert json.loads(call_brain(address, "history", "wc"))[0]["id"] == "r-1"
    finally:
        server.close()


class _ReadImpostor:
    """Refuses reads as a --require-auth-reads brain would, then fails the proof; records every
    secret it is sent."""

    def __init__(self) -> None:
        self.secrets: list[str] = []

    def ping(self) -> str:
        return "impostor"

    def status(self, secret) -> str:
        self.secrets.append(secret)
        raise wire().BrainError("send me the secret", needs_operator_secret=True)

    def history(self, topology, secret) -> str:
        self.secrets.append(secret)
        raise wire().BrainError("send me the secret", needs_operator_secret=True)

    def prove_operator_secret(self, challenge: bytes) -> str:
        return secret_proof("another secret", challenge)


def test_an_impostor_that_asks_for_the_secret_on_a_read_never_receives_it():
    impostor = _ReadImpostor()
    server, address = serve_brain(impostor)  # type: ignore[arg-type]
    try:
        with pytest.raises(BrainNotProven, match="operator secret was not sent"):
            call_brain(address, "status", read_secret=lambda: SECRET)
        client_module._reads_need_secret.add(address)  # as if the real brain had asked before
        with pytest.raises(BrainNotProven):
            call_brain(address, "history", "wc", read_secret=lambda: SECRET)
        assert SECRET not in impostor.secrets and set(impostor.secrets) <= {"", None}
    finally:
        server.close()


def test_a_brain_restarted_without_a_secret_is_read_plainly_again():
    """The client remembered that reads need the secret; the brain at that address now has no
    secret (it cannot prove one): the read goes out without it and is answered."""
    handler = BrainHandler(RoundConfig(), None, _Controller())
    server, address = serve_brain(handler)
    client_module._reads_need_secret.add(address)
    try:
        assert "trigger" in json.loads(call_brain(address, "status", read_secret=lambda: SECRET))
        assert address not in client_module._reads_need_secret
    finally:
        server.close()


def test_the_option_needs_an_operator_secret_and_excludes_unauthenticated_rounds(tmp_path):
    with pytest.raises(ValueError, match="needs an operator secret"):
        BrainHandler(RoundConfig(), reads_need_secret=True)
    allowing = ShimAuth(None, allow_unauthenticated=True)
    with pytest.raises(ValueError, match="--allow-unauthenticated-rounds"):
        serve(
            "127.0.0.1", 0, RoundConfig(), None, None, OperatorSecret(SECRET, "x"), allowing,
            reads_need_secret=True,
        )  # fmt: skip


def test_serve_refuses_both_options_before_starting(tmp_path, capsys):
    from scheduler_py.cli import main

    argv = [
        "serve", "--require-auth-reads", "--allow-unauthenticated-rounds",
        "--shim-key-file", str(tmp_path / "shim.key"), "--port", "0",
    ]  # fmt: skip
    try:
        status: object = main(argv)
        said = capsys.readouterr().err
    except SystemExit as ended:
        status, said = ended.code, str(ended.code)
    assert status != 0 and status is not None
    assert "cannot be combined with --allow-unauthenticated-rounds" in said
    assert not (tmp_path / "shim.key").exists(), "refused before anything was created"


def _secret_file(tmp_path: Path, value: str = SECRET) -> Path:
    path = tmp_path / "operator.secret"
    path.write_text(value + "\n")
    path.chmod(0o600)
    return path


def test_cli_history_and_dry_run_send_the_secret_of_secret_file(tmp_path, capsys):
    server, address, controller = _brain()
    secret_file = str(_secret_file(tmp_path))
    try:
        assert history_main(["wc", "--brain", address, "--secret-file", secret_file, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["id"] == "r-1"
        argv = ["wc", "--dry-run", "--brain", address, "--secret-file", secret_file, "--json"]
        assert replan_main(argv) == 0
        assert json.loads(capsys.readouterr().out)["dry_run"] is True
        assert controller.replans == [("wc", True)]
    finally:
        server.close()


def test_cli_history_without_the_secret_exits_1_with_the_brains_reason(tmp_path, capsys):
    server, address, _ = _brain()
    try:
        with pytest.raises(SystemExit) as ended:
            history_main(["wc", "--brain", address])
        assert ended.value.code not in (0, None)
        err = capsys.readouterr().err
        assert "needs the operator secret" in err and "--require-auth-reads" in err
    finally:
        server.close()
