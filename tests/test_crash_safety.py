"""Crash safety of a reconfiguration (scheduler_py/reconfig/execution.py, history.py,
recovery.py): every Nimbus call that changes a topology's state is journaled first, the
journal is on the disk when a step is taken, a restarted brain activates any topology its
unfinished entries left INACTIVE, and a full disk never leaves a topology marked busy.

A brain killed mid-reconfiguration is played by :class:`Killed`, raised at the point of the
kill: it is a ``BaseException``, so no ``except Exception`` of the brain catches it, and every
Nimbus call after it fails too (a dead process changes nothing more). The full disk is a real
one: the journal becomes a link to ``/dev/full``, whose writes fail with ``ENOSPC``.
"""

from __future__ import annotations

import argparse
import errno
import os
import time
from pathlib import Path

import pytest

from scheduler_py.reconfig.controller import Controller, ReconfigError
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.pause import TriggerPause
from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.round import RoundConfig
from tests.snapshots import wordcount
from tests.test_reconfig_controller import (
    FAST,
    SPREAD,
    FakeNimbus,
    FakeShim,
    ScriptedLive,
    _cluster,
    _round,
    _wait_terminal,
)

DEV_FULL = Path("/dev/full")
QUICK_ROLLBACK = TriggerConfig(
    drain_poll_secs=0.01, drain_timeout_secs=0.2, apply_timeout_secs=1.0, warmup_secs=0
)


class Killed(BaseException):
    """The brain process dies here: nothing after it runs."""


class DyingNimbus(FakeNimbus):
    """Nimbus that carries out ``kill_after``, then the brain process is killed."""

    def __init__(self, kill_after: str) -> None:
        super().__init__()
        self.kill_after = kill_after
        self.dead = False

    def _alive(self) -> None:
        if self.dead:
            raise Killed

    def status(self, name):
        self._alive()
        return super().status(name)

    def deactivate(self, name):
        self._alive()
        super().deactivate(name)
        self._kill_if("deactivate")

    def rebalance(self, name, wait_secs=0):
        self._alive()
        super().rebalance(name, wait_secs)
        self._kill_if("rebalance")

    def activate(self, name):
        self._alive()
        super().activate(name)

    def _kill_if(self, call: str) -> None:
        if call == self.kill_after:
            self.dead = True
            raise Killed


def _controller(directory, nimbus, live=None, trigger=FAST):
    return Controller(
        RoundConfig(), trigger, History(directory), nimbus, live=live, sleep=time.sleep
    )


def _running(controller):
    _round(controller, _cluster(wordcount(current=SPREAD, needs_scheduling=False)))


def _join(controller, timeout=10.0):
    for thread in controller._threads:
        thread.join(timeout)
        assert not thread.is_alive(), f"{thread.name} still running after {timeout}s"


def _restart(directory, nimbus_state):
    """A new brain process on the same state directory and the same Nimbus state."""
    nimbus = FakeNimbus(status=nimbus_state)
    controller = Controller(RoundConfig(), FAST, History(directory), nimbus, sleep=lambda s: None)
    _running(controller)
    controller.recover()
    return controller, nimbus


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_brain_killed_right_after_deactivate_is_recovered_and_the_topology_activated(
    tmp_path,
):
    nimbus = DyingNimbus(kill_after="deactivate")
    controller = _controller(tmp_path, nimbus, ScriptedLive())
    _running(controller)
    controller.replan("wc", "td")
    _join(controller)
    assert nimbus.state == "INACTIVE" and nimbus.calls == ["deactivate"]

    restarted, nimbus_after = _restart(tmp_path, nimbus.state)
    assert nimbus_after.calls == ["activate"] and nimbus_after.state == "ACTIVE"
    entry = restarted.history_of("wc")[-1]
    assert (
        entry["state"] == "rolled_back" and "brain restarted during 'draining'" in entry["reason"]
    ), entry
    assert "resumed_at" in entry and "resume_error" not in entry


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_brain_killed_right_after_rebalance_is_recovered_and_the_topology_activated(tmp_path):
    nimbus = DyingNimbus(kill_after="rebalance")
    controller = _controller(tmp_path, nimbus, ScriptedLive())
    _running(controller)
    controller.replan("wc", "td")
    _join(controller)
    assert nimbus.calls == ["deactivate", "rebalance 0"] and nimbus.state == "INACTIVE"

    restarted, nimbus_after = _restart(tmp_path, nimbus.state)
    assert nimbus_after.calls == ["activate"] and nimbus_after.state == "ACTIVE"
    assert restarted.history_of("wc")[-1]["state"] == "rolled_back"


class JournalWatchingNimbus(FakeNimbus):
    """Reads the journal *on disk* (a fresh reader) whenever Nimbus is asked to change the
    topology's state: what a brain killed during that call would leave behind."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        self.seen: list[tuple[str, str | None]] = []

    def _journal_state(self) -> str | None:
        entries = History(self.directory).entries("wc")
        return entries[-1].get("state") if entries else None

    def deactivate(self, name):
        self.seen.append(("deactivate", self._journal_state()))
        super().deactivate(name)

    def rebalance(self, name, wait_secs=0):
        self.seen.append(("rebalance", self._journal_state()))
        super().rebalance(name, wait_secs)


def test_every_call_that_takes_a_topology_out_of_service_is_journaled_before_it(tmp_path):
    nimbus = JournalWatchingNimbus(tmp_path)
    controller = _controller(tmp_path, nimbus, ScriptedLive())
    topology = wordcount(current=SPREAD, needs_scheduling=False)
    _running(controller)
    with FakeShim(controller, topology):
        controller.replan("wc", "td")
        entry = _wait_terminal(controller)
    assert entry["state"] == "completed", entry
    assert nimbus.seen == [("deactivate", "draining"), ("rebalance", "applying")]
    assert nimbus.state == "ACTIVE"


@pytest.mark.parametrize("journal_state", ["accepted", "draining", "applying", "resuming"])
def test_recovery_activates_an_inactive_topology_of_any_unfinished_entry(tmp_path, journal_state):
    history = History(tmp_path)
    history.record("wc", "r1", state="accepted", topology_id="wc-1", storm_placement=[])
    if journal_state != "accepted":  # no deactivated_at: the call came before the journal
        history.record("wc", "r1", state=journal_state)
    restarted, nimbus = _restart(tmp_path, "INACTIVE")
    assert nimbus.calls == ["activate"] and nimbus.state == "ACTIVE"
    entry = restarted.history_of("wc")[-1]
    assert entry["state"] == "rolled_back" and "pause_secs" in entry


def test_recovery_leaves_an_active_topology_alone(tmp_path):
    history = History(tmp_path)
    history.record("wc", "r1", state="accepted", topology_id="wc-1", storm_placement=[])
    history.record("wc", "r1", state="draining", deactivated_at=time.time())
    restarted, nimbus = _restart(tmp_path, "ACTIVE")
    assert nimbus.calls == []
    assert restarted.history_of("wc")[-1]["state"] == "rolled_back"


def _fill_disk(journal: Path) -> Path:
    """From now on every write to ``journal`` fails with ENOSPC; returns where it was kept."""
    kept = journal.with_name(journal.name + ".kept")
    journal.rename(kept)
    journal.symlink_to(DEV_FULL)
    return kept


def _free_disk(journal: Path, kept: Path) -> None:
    journal.unlink()
    kept.rename(journal)


class DiskFillingNimbus(FakeNimbus):
    """The disk fills up while the topology is being activated."""

    def __init__(self, journal: Path) -> None:
        super().__init__()
        self.journal = journal
        self.kept: Path | None = None

    def activate(self, name):
        super().activate(name)
        if self.kept is None:
            self.kept = _fill_disk(self.journal)


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_while_recording_the_outcome_resumes_and_frees_the_topology(tmp_path):
    journal = tmp_path / "history" / "wc.jsonl"
    nimbus = DiskFillingNimbus(journal)
    controller = _controller(tmp_path, nimbus, ScriptedLive(pending=(5,)), QUICK_ROLLBACK)
    _running(controller)
    controller.replan("wc", "td")
    _join(controller)  # the drain timed out, the topology was activated, the outcome not written
    assert nimbus.calls == ["deactivate", "activate"] and nimbus.state == "ACTIVE"
    assert nimbus.kept is not None
    with pytest.raises(OSError) as full:
        History(tmp_path).record("wc", "probe", state="declined")
    assert full.value.errno == errno.ENOSPC  # the disk really was full

    _free_disk(journal, nimbus.kept)
    again = controller.replan("wc", "td")  # not "already being reconfigured"
    assert again["reconfiguration_id"]
    _join(controller)
    assert controller.history_of("wc")[-1]["state"] == "rolled_back"


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
def test_no_nimbus_call_without_a_journal_line_and_the_topology_stays_free(tmp_path):
    nimbus = FakeNimbus()
    controller = _controller(tmp_path, nimbus, ScriptedLive(pending=(5,)), QUICK_ROLLBACK)
    _running(controller)
    journal = tmp_path / "history" / "wc.jsonl"
    journal.write_text("")
    kept = _fill_disk(journal)
    with pytest.raises(ReconfigError, match="cannot write its history"):
        controller.replan("wc", "td")
    assert nimbus.calls == []
    _free_disk(journal, kept)
    assert controller.replan("wc", "td")["reconfiguration_id"]
    _join(controller)


def test_a_line_cut_short_by_a_full_disk_does_not_swallow_the_next_one(tmp_path):
    history = History(tmp_path)
    history.record("wc", "r1", state="accepted", topology_id="wc-1")
    journal = tmp_path / "history" / "wc.jsonl"
    with journal.open("a") as torn:
        torn.write('{"id": "r1", "state": "dra')  # what ENOSPC mid-write leaves
    history.record("wc", "r1", state="rolled_back")
    assert history.entries("wc")[-1]["state"] == "rolled_back"


def test_the_journal_and_the_renamed_pause_file_are_fsynced_with_their_directories(
    tmp_path, monkeypatch
):
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(descriptor):
        synced.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    history = History(tmp_path)
    history.record("wc", "r1", state="accepted")
    journal = str(tmp_path / "history" / "wc.jsonl")
    assert journal in synced and str(tmp_path / "history") in synced
    synced.clear()
    history.record("wc", "r1", state="draining")
    assert synced == [journal]  # the directory only when the journal is new

    synced.clear()
    TriggerPause(tmp_path).pause("wc")
    assert any(".trigger-paused.json" in path for path in synced)  # the content, then
    assert synced[-1] == str(tmp_path)  # the rename


@pytest.mark.parametrize("euid", [0, 1000])
def test_serve_with_nimbus_keeps_the_history_on_disk_without_state_dir(tmp_path, monkeypatch, euid):
    from scheduler_py.cli.operator import add_serve_arguments, build_controller
    from scheduler_py.reconfig import history
    from scheduler_py.reconfig.history import default_state_dir

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(history, "SYSTEM_STATE_DIR", tmp_path / "var-lib")
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    parser = argparse.ArgumentParser()
    parser.add_argument("--zookeeper")
    add_serve_arguments(parser)
    controller = build_controller(parser.parse_args(["--nimbus", "127.0.0.1:1"]), RoundConfig())
    expected = tmp_path / "var-lib" if euid == 0 else tmp_path / "xdg" / "scheduler-py"
    assert controller.history.directory == expected == default_state_dir()
    assert (expected / "history").is_dir()
    explicit = parser.parse_args(["--nimbus", "127.0.0.1:1", "--state-dir", str(tmp_path / "s")])
    assert build_controller(explicit, RoundConfig()).history.directory == tmp_path / "s"
