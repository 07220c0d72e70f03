"""Soak on the real local cluster (docs/reliability.md, "Soak"): word count with the message-id
ledger goes through ``RECONFIGURATIONS`` operator re-plans in a row, each a real placement change
carried out by the brain's reconfiguration controller through the drain-out path
(docs/reconfiguration.md), alternating ``tdls`` (everything consolidated on one supervisor)
and ``even`` (round-robin over the three), while the spout rate alternates between two
values through the control file (topologies/wordcount/src/spouts/words.py).

After each reconfiguration the test waits for the history entry to be terminal, checks that
it completed and that Nimbus runs the planned placement, waits for tuples to be acked again,
and records the brain process's resident memory and open file descriptors (``/proc``). At
the end it deactivates the topology and waits until every emitted message id was acked.

It prints one ``soak:`` line per reconfiguration and a ``soak: ledger`` line with the counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scheduler_py.devtools.ledger import read_ledgers
from scheduler_py.reconfig.history import TERMINAL, History
from tests.cluster.operations import LIVE_COUNTERS, wait_for_free_supervisors, wordcount_files
from tests.cluster.waiting import machine_timeout, wait_until

pytestmark = pytest.mark.cluster

NAME = "wc-soak"
RECONFIGURATIONS = 10
# tdls first: word count is submitted with `even`
ALGORITHMS = ("tdls", "even")
# two spout rates (one sentence per interval per spout task; 2 tasks)
RATES_MS = (20, 100)
# fresh acks to see after each resume before the next reconfiguration: the topology is
# under load (not just restarted) when it is drained again
ACKS_BETWEEN = 100
SCHEDULER_PY = str(Path(sys.executable).with_name("scheduler-py"))
# Bounds on the brain's growth from after the 2nd reconfiguration (imports, thread pools
# and the Thrift/ZooKeeper connections are all set up by then) to after the last one.
# Python's allocator returns memory to the OS only in whole arenas, so RSS moves by a few MB
# with each round's garbage even without a leak; 40 MB over 8 reconfigurations is 5 MB
# per reconfiguration, far above that noise, while a leak of the per-reconfiguration state
# the controller keeps (snapshots, proposals, history entries of ~100 KB) would need about
# 50 of them. One descriptor per reconfiguration that is never closed (a Nimbus or ZooKeeper
# connection, a history file) would add 8; a bound of 5 allows sockets caught mid-open.
MAX_RSS_GROWTH_MB = 40
MAX_FD_GROWTH = 5


def _write_control(path: Path, interval_ms: int) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"interval_ms": interval_ms}))
    os.replace(tmp, path)


def _rss_mb(pid: int) -> float:
    """The process's resident set (VmRSS in /proc/PID/status), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS line in /proc/{pid}/status")


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.fixture(scope="module")
def soak(cluster, tmp_path_factory):
    work = tmp_path_factory.mktemp("soak")
    control, ledger = work / "control.json", work / "ledger"
    _write_control(control, RATES_MS[0])
    cluster.start_brain(*cluster.brain_command("--reconfig-check-secs", "2"))

    wait_for_free_supervisors(cluster)  # an earlier test may have restarted one
    try:
        cluster.submit(
            NAME,
            "topology.workers=3",
            "topology.max.spout.pending=50",
            "topology.component.cpu.pcore.percent=5",
            "scheduler.brain.algorithm=even",
            "scheduler.brain.node.cpu.cap=60",
            # only the operator re-plans: no automatic trigger in between
            "scheduler.reconfig.enabled=false",
            "scheduler.reconfig.replan.on.measured=false",
            # the whole plan in one reconfiguration (no staging)
            "scheduler.reconfig.max.restart.share=1.0",
            # the live counters the drain observes
            *LIVE_COUNTERS,
            *wordcount_files(control, ledger),
            wait_acked=20,
        )
        yield cluster, control, ledger
    finally:
        cluster.kill(NAME)
        cluster.start_brain()


def _placement(cluster) -> frozenset[tuple[int, int, str, int]]:
    return frozenset(
        (r.task_start, r.task_end, r.host, r.port) for r in cluster.nimbus.executor_runs(NAME)
    )


def test_ten_reconfigurations_in_a_row_lose_nothing_and_the_brain_stays_flat(soak):
    cluster, control, ledger = soak
    started = time.monotonic()
    history = History(cluster.brain_state_dir)
    pid = int(cluster.brain_pidfile.read_text().strip())
    wait_until(
        lambda: len(_placement(cluster)) == 11, machine_timeout(60), "all 11 executors running"
    )
    assert history.entries(NAME) == []
    brain = f"127.0.0.1:{cluster.brain_port}"
    rows = []
    for n in range(1, RECONFIGURATIONS + 1):
        algorithm = ALGORITHMS[(n - 1) % 2]
        rate = RATES_MS[n % 2]  # the other rate than the run before: the load alternates
        _write_control(control, rate)
        before = _placement(cluster)
        result = subprocess.run(
            [SCHEDULER_PY, "replan", NAME, "--algorithm", algorithm, "--brain", brain],
            capture_output=True,
            text=True,
            timeout=machine_timeout(300),
            check=False,
        )
        assert result.returncode == 0, (
            f"reconfiguration {n} ({algorithm}): replan failed\n{result.stdout}\n{result.stderr}"
        )

        def settled(n=n):
            entries = history.entries(NAME)
            return len(entries) >= n and entries[n - 1].get("state") in TERMINAL and entries

        entries = wait_until(
            settled,
            machine_timeout(120),
            f"reconfiguration {n} to be terminal in the history",
            lambda: history.entries(NAME)[-1:],
        )
        assert len(entries) == n, f"more reconfigurations than requested: {entries[n - 1 :]}"
        entry = entries[-1]
        assert entry["state"] == "completed", f"reconfiguration {n} ({algorithm}): {entry}"
        assert entry["trigger"] == "operator", entry
        assert entry["states"] == ["accepted", "draining", "applying", "resuming", "completed"]
        after = _placement(cluster)
        assert after != before, f"reconfiguration {n} ({algorithm}) changed no placement"
        planned = {(p[0], p[1], p[4]) for p in entry["storm_placement"]}
        assert {(s, e, p) for s, e, _, p in after} == planned, (after, planned)
        assert cluster.nimbus.status(NAME) == "ACTIVE"
        acked = read_ledgers(ledger).acked
        wait_until(
            lambda acked=acked: read_ledgers(ledger).acked >= acked + ACKS_BETWEEN,
            machine_timeout(90),
            f"{ACKS_BETWEEN} more message ids acked after reconfiguration {n}",
            lambda: read_ledgers(ledger).describe(),
        )
        rows.append(
            (
                n,
                algorithm,
                rate,
                entry["pause_secs"],
                len({h for _, _, h, _ in after}),
                _rss_mb(pid),
                _fds(pid),
            )
        )

    cluster.nimbus.deactivate(NAME)
    summary = wait_until(
        lambda: (s := read_ledgers(ledger)).emitted > 0 and not s.unacked and s,
        machine_timeout(120),
        "every emitted message id to be acked",
        lambda: read_ledgers(ledger).describe(),
    )
    print()
    print("soak: n  algorithm  spout_ms  pause_s  hosts  brain_rss_mb  brain_fds")
    for n, algorithm, rate, pause, hosts, rss, fds in rows:
        print(
            f"soak: {n:2d}  {algorithm:9s}  {rate:8d}  {pause:7.2f}  {hosts:5d}  {rss:12.1f}  "
            f"{fds:9d}"
        )
    rss_growth = rows[-1][5] - rows[1][5]
    fd_growth = rows[-1][6] - rows[1][6]
    print(
        f"soak: ledger: {summary.emitted} ids emitted, {summary.acked} acked, "
        f"{len(summary.unacked)} lost, {len(summary.unknown_ids)} unknown, {summary.failed} "
        f"fails, {summary.replays} replays, {summary.duplicate_acks} duplicate acks, "
        f"{summary.torn_lines} torn lines, {len(summary.files)} spout process(es)"
    )
    print(
        f"soak: brain (pid {pid}) after reconfiguration 2 → {RECONFIGURATIONS}: RSS "
        f"{rows[1][5]:.1f} → {rows[-1][5]:.1f} MB ({rss_growth:+.1f}), fds {rows[1][6]} → "
        f"{rows[-1][6]} ({fd_growth:+d}); {RECONFIGURATIONS} reconfigurations in "
        f"{time.monotonic() - started:.0f} s"
    )
    assert summary.acked == summary.emitted, summary.describe()
    assert not summary.unknown_ids, sorted(summary.unknown_ids)[:10]
    assert summary.duplicate_acks <= summary.replays, summary.describe()
    assert rss_growth < MAX_RSS_GROWTH_MB, rows
    assert fd_growth <= MAX_FD_GROWTH, rows
    cluster.nimbus.activate(NAME)
