"""Several ``bench cluster`` sessions reported as one: their runs pooled, then the summary,
the throughput model's check and the targets printed as ``bench cluster`` prints them for
one session.

Why. With the steady warm-up a CPU-bound run takes about 8 minutes, so the three cluster
instances per scheduler the targets ask for (``docs/evaluation.md``) come from several
sessions of one instance each, every session interleaving its schedulers on fresh clusters
(``--set restart=run --set order=cycle``). Pooling their recorded runs lets the benchmark
give the verdict on all of them, instead of a table combined by hand.

``scheduler-py bench cluster_sessions --set files=A.json,B.json,C.json``: each file a
``bench cluster`` result (``cluster.json`` or a copy of it under another name); without
``files``, every such result directly in the output directory. The sessions
must agree on what makes their runs comparable (:data:`ALIKE`, and the emulated hosts:
names, addresses, racks, CPU quotas, link rates); a file that differs is refused with the
setting that differs. Every run is kept as recorded, with the file it came from
(``runs[].session``), and predicted again by the throughput model as it is now
(:func:`scheduler_py.bench.cluster_calibration.predicted_run`). Writes
``bench-results/cluster_sessions.json`` (the ``summary`` with ``bench cluster``'s fields,
:data:`~scheduler_py.bench.cluster_runs.SUMMARY_FIELDS`, the ``targets`` and the models'
checks as ``bench cluster`` writes them, the sessions) and a PNG.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_py.bench import cluster_calibration, cluster_report, default_orders, report
from scheduler_py.bench.cluster_adaptive import ADAPTIVE
from scheduler_py.bench.cluster_report import draw, tables
from scheduler_py.bench.cluster_runs import SUMMARY_FIELDS, summarise
from scheduler_py.bench.registry import BenchOptions, SettingError

NAME = "cluster_sessions"
PAPER = "several bench cluster sessions pooled"

ALIKE = ("compiler", "interval", "steady_warmup", "warmup", "monitor", "brain_args", "workers")
"""Settings every pooled session must share: what the workers run on, how long and when a
run is measured, what is installed beside the topologies and what the brain was told."""

ADAPTIVE_ALIKE = ("adaptive_algorithm", "adaptive_placed_by")
"""Settings the sessions must also share when one of them ran ``brain:adaptive`` (they
change nothing else, and results recorded before they existed lack them)."""

HOST_FIELDS = ("name", "address", "rack", "cpu_cores")
"""What of each emulated host the sessions must share (its network namespace and cgroup
are named anew by every cluster start)."""


@dataclass(frozen=True)
class Session:
    """One ``bench cluster`` result file."""

    path: Path
    document: Mapping[str, Any]

    @property
    def settings(self) -> Mapping[str, Any]:
        return self.document.get("settings") or {}

    @property
    def hosts(self) -> Any:
        return self.document.get("emulated_hosts")


def load(path: Path) -> Session:
    """A ``bench cluster`` result; a :class:`SettingError` naming the file otherwise."""
    try:
        document = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SettingError(
            f"--set files=: {path} is not a readable JSON file ({error}); expected a result "
            "of `scheduler-py bench cluster`"
        ) from None
    if not isinstance(document, Mapping) or document.get("benchmark") != (
        cluster_calibration.BENCHMARK
    ):
        found = document.get("benchmark") if isinstance(document, Mapping) else "not an object"
        raise SettingError(
            f"--set files=: {path} is not a bench cluster result (benchmark: {found!r}); "
            "expected the cluster.json of `scheduler-py bench cluster`"
        )
    if not isinstance(document.get("runs"), list) or not document["runs"]:
        raise SettingError(f"--set files=: {path} records no runs")
    return Session(path, document)


def host_shape(hosts: Any) -> tuple | None:
    """What two sessions' emulated hosts must share, or ``None`` on the loopback cluster."""
    if not isinstance(hosts, Mapping) or not hosts.get("hosts"):
        return None
    listed = tuple(
        tuple(host.get(field) for field in HOST_FIELDS)
        for host in sorted(hosts["hosts"], key=lambda h: str(h.get("name")))
    )
    return listed, hosts.get("host_mbit"), hosts.get("interrack_mbit")


def check_alike(sessions: Sequence[Session]) -> None:
    """Refuse sessions whose runs are not comparable, naming the file and the setting."""
    first = sessions[0]
    adaptive = any(ADAPTIVE in (s.settings.get("schedulers") or []) for s in sessions)
    keys = ALIKE + (ADAPTIVE_ALIKE if adaptive else ())
    for other in sessions[1:]:
        for key in keys:
            mine, theirs = first.settings.get(key), other.settings.get(key)
            if mine != theirs:
                raise SettingError(
                    f"--set files=: {other.path} ran with {key}={theirs!r}, {first.path} with "
                    f"{key}={mine!r}; pool only sessions run alike (the same --set options, "
                    "apart from topologies, schedulers, repetitions and order)"
                )
        if host_shape(other.hosts) != host_shape(first.hosts):
            raise SettingError(
                f"--set files=: {other.path} ran on other hosts than {first.path} (names, "
                "addresses, racks, CPU quotas or link rates differ, or one ran on the "
                "loopback cluster); pool only sessions on the same emulated hosts"
            )


def pooled_runs(sessions: Sequence[Session]) -> list[dict[str, Any]]:
    """Every run of every session as recorded, with ``session`` (its file's name) and the
    throughput model's prediction made again."""
    runs = []
    for session in sessions:
        for run in session.document["runs"]:
            pooled = dict(run, session=session.path.name)
            if session.hosts is not None and pooled.get("placement"):
                pooled["throughput_model"] = cluster_calibration.predicted_run(
                    pooled, session.hosts
                )
            runs.append(pooled)
    return runs


def _union(sessions: Sequence[Session], key: str) -> list[Any]:
    return list(dict.fromkeys(v for s in sessions for v in s.settings.get(key) or []))


def session_files(options: BenchOptions) -> list[Path]:
    """``--set files=``, else every ``bench cluster`` result directly in the output
    directory (``scheduler-py bench all`` runs ``cluster`` first, which writes one)."""
    unknown = sorted(set(options.extra) - {"files"})
    if unknown:
        raise SettingError(f"unknown --set key(s) {unknown}: expected files=A.json,B.json,…")
    given = [Path(p.strip()) for p in options.extra.get("files", "").split(",") if p.strip()]
    if given:
        return given
    found = [
        path
        for path in sorted(options.output_dir.glob("*.json"))
        if cluster_calibration.cluster_result(path) is not None
    ]
    if not found:
        raise SettingError(
            f"--set files=: none given and no bench cluster result in {options.output_dir}; "
            "expected the cluster.json of one or more `scheduler-py bench cluster` sessions, "
            "comma-separated"
        )
    return found


def run(options: BenchOptions) -> None:
    sessions = [load(path) for path in session_files(options)]
    check_alike(sessions)
    runs = pooled_runs(sessions)
    settings = dict(sessions[0].settings)
    settings |= {key: _union(sessions, key) for key in ("topologies", "schedulers", "loadaware")}
    emulated = all(bool(r.get("emulated")) for r in runs)
    elapsed = sum(float(s.document.get("duration_s") or 0.0) for s in sessions)
    report.title("Cluster benchmark sessions pooled", PAPER)
    for session in sessions:
        report.line(
            f"{session.path}: {len(session.document['runs'])} runs, created "
            f"{session.document.get('created', '?')}, restart "
            f"{session.settings.get('restart', '?')}, order "
            f"{'serpentine' if session.settings.get('serpentine') else 'cycle'}"
        )
    rows = summarise(runs)
    tables(rows, settings, emulated)
    order_checks = default_orders.hosts_check(runs, rows, sessions[0].hosts)
    checked = cluster_report.checks_and_targets(
        rows, runs, settings, emulated, False, elapsed, order_checks
    )

    png, json_path = report.output_paths(options, NAME)
    topologies = settings["topologies"]
    report.plot(png, lambda axes: draw(axes, rows, topologies), panels=len(topologies))
    data = report.common_json(options, NAME, PAPER)
    data.update(
        {
            "sessions": [
                {
                    "file": str(s.path),
                    "created": s.document.get("created"),
                    "runs": len(s.document["runs"]),
                    "duration_s": s.document.get("duration_s"),
                }
                for s in sessions
            ],
            "settings": settings,
            "emulated": emulated,
            "emulated_hosts": sessions[0].hosts,
            "summary_fields": list(SUMMARY_FIELDS),
            "runs": runs,
            "summary": rows,
            **checked,
        }
    )
    report.write_json(json_path, data)
    report.footer(options, png, json_path)
