"""The dashboard's server time per GET endpoint and page for a topology of 1,000
executors on 100 hosts (synthetic snapshot): p50/p99 against API p99 < 50 ms and a topology
page < 300 ms.

The dashboard (``scheduler_py/dashboard/``) is served by a real werkzeug HTTP server on
127.0.0.1 (``werkzeug.serving.make_server``, threaded, as ``scheduler-py dashboard`` runs
Flask) in a child process, so that the requests cross a socket and the server's time is not
shared with the client's; the client is ``http.client`` in this process. The child builds the
synthetic cluster of :mod:`scheduler_py.bench.dashboard_synthetic` and hands the dashboard
in-process sources: the brain's status text is parsed per call as the Thrift client does but
comes from memory, the history from memory (the real dashboard asks the brain per request),
the aggregate is re-parsed every 5 s as ``ZooKeeperAggregates``' cache does, the plan log is
a real file. So the numbers are the dashboard's own time, not the brain's or ZooKeeper's.
The requests come much faster than a browser polls (every 5 s), so the dashboard's caches
(status 1 s, cleaned aggregate per ZooKeeper read, parsed plan log per file change) hit more
often than for one operator: a request that refreshes one is in the maximum of the range.

Two times per request: **server** — measured inside the child by a WSGI wrapper from the
request's arrival at the app until its body has been written (the "server time";
targets are judged on it) — and **client** — what an operator's browser waits on this machine
(loopback round trip included). Endpoints are interleaved: every repetition requests each of
them once, in a new random order (seeded), after ``warmup`` repetitions that are not counted.
The topology page is the page shell plus the two API calls its script makes
(``static/dashboard.js``: ``/topologies/{id}`` and ``/decisions?topology=…&limit=50``),
summed per repetition.

Options (``--set``): ``executors`` (default 1000, quick 100), ``hosts`` (100, quick 10),
``racks`` (5), ``repetitions`` (200, quick 20), ``warmup`` (3), ``plan_log`` (lines in the
plan log, default 500), ``history`` (reconfigurations in the history, default 200),
``aggregate_cache_secs`` (how long the aggregate source hands out the same document, default 5
as ``ZooKeeperAggregates``), ``prefetch_secs`` (the dashboard re-reads aggregates off the
request path this often, default 2 as ``scheduler-py dashboard`` does; 0 reads them in the
request, so with ``aggregate_cache_secs=0`` every request that needs one reads it: the worst
case).
"""

from __future__ import annotations

import http.client
import json
import logging
import multiprocessing
import random
import statistics
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from scheduler_py.bench import report
from scheduler_py.bench.registry import BenchOptions
from scheduler_py.bench.report import Table, fmt
from scheduler_py.bench.roundtrip import percentile
from scheduler_py.dashboard.prefetch import DEFAULT_PERIOD
from scheduler_py.scheduling.interfaces import OperatorError

NAME = "dashboard_api"
PAPER = "dashboard API p99 < 50 ms, topology page < 300 ms (1,000 executors)"
API_TARGET_MS = 50.0
PAGE_TARGET_MS = 300.0
START_SECS = 300.0
TOPOLOGY_PAGE = "topology page (shell + its 2 API calls)"
COLUMNS = (
    "endpoint",
    "bytes",
    "p50 ms",
    "p99 ms",
    "range ms",
    "client p50",
    "client p99",
    "target",
)


def endpoints(topology: str) -> dict[str, str]:
    """Label → request path of every GET endpoint and page (labels are the API's paths)."""
    key = quote(topology, safe="")
    return {
        "/api/v1/cluster": "/api/v1/cluster",
        "/api/v1/topologies": "/api/v1/topologies",
        "/api/v1/topologies/{topology}": f"/api/v1/topologies/{key}",
        "/api/v1/decisions": "/api/v1/decisions",
        "/api/v1/decisions?topology=…&limit=50": f"/api/v1/decisions?topology={key}&limit=50",
        "/api/v1/algorithms": "/api/v1/algorithms",
        "/api/v1/openapi.json": "/api/v1/openapi.json",
        "page /": "/",
        "page /topology/{topology}": f"/topology/{key}",
        "page /decisions": "/decisions",
        "page /whatif": "/whatif",
        "page /algorithms": "/algorithms",
    }


TOPOLOGY_PARTS = (
    "page /topology/{topology}",
    "/api/v1/topologies/{topology}",
    "/api/v1/decisions?topology=…&limit=50",
)


# --------------------------------------------------------------------------- the server (child)


class _Brain:
    """The brain's port answered from memory (``scheduling/dashboard_ports.BrainPort``). Like
    the real one (``cli/dashboard.ThriftBrain``) it parses the status text on every call; the
    dashboard's cache asks at most once a second."""

    address = "in-process synthetic brain"

    def __init__(self, status: Mapping[str, Any], history: Sequence[Mapping[str, Any]]):
        self._status, self._history = json.dumps(status), history

    def status(self) -> Mapping[str, Any]:
        return json.loads(self._status)

    def replan(self, topology: str, algorithm: str, params: Mapping[str, Any], dry_run: bool):
        raise OperatorError(
            "the benchmark's synthetic brain answers reads only; expected GET requests"
        )

    def history(self, topology: str) -> Sequence[Mapping[str, Any]]:
        return self._history


_REQUEST = threading.local()
"""``read_aggregate``: whether the request being served on this thread parsed an aggregate"""


class _Aggregates:
    """Aggregates as ``monitoring/measured.ZooKeeperAggregates`` hands them out: the same
    object for ``cache_secs``, then a newly parsed one (here from memory, not ZooKeeper)."""

    def __init__(self, documents: Mapping[str, Mapping[str, Any]], cache_secs: float = 5.0):
        self._texts = {key: json.dumps(value) for key, value in documents.items()}
        self.cache_secs = cache_secs
        self._cache: dict[str, tuple[float, Mapping[str, Any]]] = {}
        self._lock = threading.Lock()
        self.reads = 0
        """documents parsed (a ZooKeeper read each in the real source)"""

    def aggregate(self, topology_id: str) -> Mapping[str, Any] | None:
        if topology_id not in self._texts:
            return None
        with self._lock:
            now = time.monotonic()
            cached = self._cache.get(topology_id)
            if cached is None or now - cached[0] >= self.cache_secs:
                cached = (now, json.loads(self._texts[topology_id]))
                self.reads += 1
                _REQUEST.read_aggregate = True
                self._cache[topology_id] = cached
            return cached[1]


REQUEST_HEADER = "X-Bench-Request"


class ServerTimer:
    """WSGI wrapper: per request, its path, the client's sequence number (header
    :data:`REQUEST_HEADER`), the seconds from the call until the body is written, and whether
    it re-read the aggregate."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        self.times: list[tuple[str, int, float, bool]] = []
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]):
        started = time.perf_counter()
        target = environ.get("PATH_INFO", "")
        if environ.get("QUERY_STRING"):
            target += "?" + environ["QUERY_STRING"]
        number = int(environ.get("HTTP_" + REQUEST_HEADER.upper().replace("-", "_"), "-1"))
        _REQUEST.read_aggregate = False
        body = self.app(environ, start_response)
        try:
            yield from body
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
            with self._lock:
                seconds = time.perf_counter() - started
                self.times.append((target, number, seconds, _REQUEST.read_aggregate))


def serve(settings: Mapping[str, int], connection: Any) -> None:
    """The child: build the synthetic cluster, serve the dashboard, report the port; then, told
    how many requests were sent, send the recorded server times and exit."""
    from werkzeug.serving import make_server

    from scheduler_py.bench import dashboard_synthetic
    from scheduler_py.dashboard.app import create_app
    from scheduler_py.dashboard.planlog import PlanLogFile
    from scheduler_py.dashboard.sources import Sources

    cluster = dashboard_synthetic.build(
        settings["executors"],
        settings["hosts"],
        settings["racks"],
        settings["plan_log"],
        settings["history"],
        settings["seed"],
    )
    aggregates = _Aggregates(
        {dashboard_synthetic.TOPOLOGY_ID: cluster.aggregate}, settings["aggregate_cache_secs"]
    )
    sources = Sources(
        _Brain(cluster.status, cluster.history),
        PlanLogFile(cluster.plan_log),
        aggregates,
        prefetch_secs=settings["prefetch_secs"] or None,
    )
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    timer = ServerTimer(create_app(sources))
    server = make_server("127.0.0.1", 0, timer, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    connection.send(
        {
            "port": server.server_port,
            "topology": dashboard_synthetic.TOPOLOGY_NAME,
            "pairs_total": cluster.pairs_total,
            "pairs_kept": len(cluster.aggregate["pairs"]),
            "plan_log_bytes": cluster.plan_log.stat().st_size,
            "history": len(cluster.history),
        }
    )
    expected = connection.recv()
    deadline = time.monotonic() + 30
    while len(timer.times) < expected and time.monotonic() < deadline:
        time.sleep(0.01)  # the last request's time is appended after its body went out
    server.shutdown()
    thread.join()
    connection.send((timer.times, aggregates.reads))
    cluster.scratch.cleanup()


# --------------------------------------------------------------------------- the client


def _get(client: http.client.HTTPConnection, path: str, number: int) -> tuple[int, int, float]:
    """(status, body bytes, seconds) of one GET on a kept-alive connection."""
    started = time.perf_counter()
    client.request("GET", path, headers={REQUEST_HEADER: str(number)})
    response = client.getresponse()
    body = response.read()
    return response.status, len(body), time.perf_counter() - started


def measure(
    port: int, paths: Mapping[str, str], repetitions: int, warmup: int, seed: int
) -> list[dict[str, Any]]:
    """One record per counted request: label, path, sequence number, repetition, bytes,
    client ms."""
    rng = random.Random(seed)
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    records = []
    labels = list(paths)
    number = 0
    try:
        for repetition in report.progress(
            range(-warmup, repetitions), total=warmup + repetitions, desc="requests"
        ):
            rng.shuffle(labels)
            for label in labels:
                number += 1
                status, size, seconds = _get(client, paths[label], number)
                if status != 200:
                    raise RuntimeError(
                        f"GET {paths[label]} answered {status}; expected 200 from the "
                        "synthetic cluster (a bug in the dashboard or the benchmark)"
                    )
                if repetition >= 0:
                    records.append(
                        {
                            "endpoint": label,
                            "path": paths[label],
                            "request": number,
                            "repetition": repetition,
                            "bytes": size,
                            "client_ms": seconds * 1000,
                        }
                    )
    finally:
        client.close()
    return records


def attach_server_times(
    records: list[dict[str, Any]], times: Sequence[tuple[str, int, float, bool]]
) -> None:
    """Give each record the server time of the same request (by sequence number) and whether
    it re-read the aggregate."""
    by_number = {number: (target, seconds, read) for target, number, seconds, read in times}
    for record in records:
        found = by_number.get(record["request"])
        if found is None or found[0] != record["path"]:
            raise RuntimeError(
                f"the server has no time for request {record['request']} ({record['path']}); "
                f"found {found!r}: expected one per request the client sent"
            )
        record["server_ms"] = found[1] * 1000
        record["aggregate_read"] = found[2]


def summarise(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per endpoint and one for the topology page: p50/p99 (server and client), the
    range, the target and whether the server p99 meets it."""
    labels = sorted({r["endpoint"] for r in records}, key=lambda e: (not e.startswith("/api/"), e))
    rows = []
    for label in labels:
        mine = [r for r in records if r["endpoint"] == label]
        target = API_TARGET_MS if label.startswith("/api/") else None
        server, client = [r["server_ms"] for r in mine], [r["client_ms"] for r in mine]
        rows.append(_row(label, server, client, mine[0]["bytes"], target))
    page: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        if record["endpoint"] in TOPOLOGY_PARTS:
            page.setdefault(record["repetition"], []).append(record)
    complete = [parts for parts in page.values() if len(parts) == len(TOPOLOGY_PARTS)]
    if complete:
        rows.append(
            _row(
                TOPOLOGY_PAGE,
                [sum(p["server_ms"] for p in parts) for parts in complete],
                [sum(p["client_ms"] for p in parts) for parts in complete],
                sum(p["bytes"] for p in complete[0]),
                PAGE_TARGET_MS,
            )
        )
    return rows


def _row(
    label: str, server: list[float], client: list[float], size: int, target: float | None
) -> dict[str, Any]:
    p99 = percentile(server, 99)
    return {
        "endpoint": label,
        "requests": len(server),
        "bytes": size,
        "p50_ms": statistics.median(server),
        "p99_ms": p99,
        "min_ms": min(server),
        "max_ms": max(server),
        "client_p50_ms": statistics.median(client),
        "client_p99_ms": percentile(client, 99),
        "target_ms": target,
        "pass": None if target is None else p99 < target,
    }


def _settings(options: BenchOptions) -> dict[str, int]:
    extra, quick = options.extra, options.quick
    defaults = {
        "executors": 100 if quick else 1000,
        "hosts": 10 if quick else 100,
        "racks": 5,
        "repetitions": 20 if quick else 200,
        "warmup": 3,
        "plan_log": 500,
        "history": 200,
        "aggregate_cache_secs": 5,
        "prefetch_secs": int(DEFAULT_PERIOD),
    }
    result = {}
    for key, default in defaults.items():
        raw = extra.get(key, default)
        try:
            result[key] = int(raw)
        except ValueError:
            raise ValueError(f"--set {key}=: expected an integer, found {raw!r}") from None
    if result["executors"] < 5 or result["hosts"] < 1 or result["repetitions"] < 1:
        raise ValueError(f"expected executors >= 5, hosts >= 1, repetitions >= 1; found {result}")
    return result | {"seed": options.seed}


def run(options: BenchOptions) -> None:
    settings = _settings(options)
    report.title("The dashboard's server time per endpoint (synthetic cluster)", PAPER)
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=serve, args=(settings, child), daemon=True)
    process.start()
    try:
        if not parent.poll(START_SECS):
            raise RuntimeError(
                f"the dashboard's child process did not start within {START_SECS:g} s "
                f"(exit code {process.exitcode})"
            )
        ready = parent.recv()
        paths = endpoints(ready["topology"])
        load_before = report.machine()["load_average"]
        records = measure(
            ready["port"], paths, settings["repetitions"], settings["warmup"], options.seed
        )
        load_after = report.machine()["load_average"]
        parent.send((settings["warmup"] + settings["repetitions"]) * len(paths))
        times, aggregate_reads = parent.recv()
    finally:
        process.join(timeout=30)
        if process.is_alive():
            process.terminate()
    attach_server_times(records, times)
    summary = summarise(records)
    cold = [r for r in records if r["aggregate_read"]]
    cold_note = (
        f"{len(cold)} counted request(s) re-read the aggregate (parsed and cleaned it, as every "
        f"{settings['aggregate_cache_secs']} s with ZooKeeperAggregates): server ms "
        + ", ".join(f"{r['endpoint']} {r['server_ms']:.0f}" for r in cold[:6])
        + ("…" if len(cold) > 6 else "")
        + (
            "; a browser polling every 5 s meets one about every poll, this run far less often"
            if settings["aggregate_cache_secs"] > 0
            else ""
        )
        if cold
        else f"no counted request read an aggregate: {aggregate_reads} read(s) off the request "
        f"path (the dashboard re-reads every {settings['prefetch_secs']} s; --set "
        "prefetch_secs=0 reads in the request)"
    )

    table = Table(
        [*COLUMNS, ""],
        caption=(
            f"{settings['executors']:,} executors on {settings['hosts']} hosts in "
            f"{settings['racks']} racks; {settings['repetitions']} interleaved repetitions after "
            f"{settings['warmup']} warm-up; server time unless marked client"
        ),
        notes=[
            f"aggregate: {ready['pairs_kept']:,} executor pairs of {ready['pairs_total']:,} "
            "(the rest cut to ZooKeeper's budget by monitoring/documents.fit_znode)",
            f"plan log {ready['plan_log_bytes'] / 1e6:.1f} MB ({settings['plan_log']} lines), "
            f"history {ready['history']} reconfigurations",
            f"werkzeug threaded server on 127.0.0.1:{ready['port']} in a child process; load "
            f"average before {load_before}, after {load_after}",
            cold_note,
        ]
        + (
            ["p99 of fewer than 100 requests is close to their maximum"]
            if settings["repetitions"] < 100
            else []
        ),
    )
    for row in summary:
        table.add(
            row["endpoint"],
            f"{row['bytes']:,}",
            fmt(row["p50_ms"], ".1f"),
            fmt(row["p99_ms"], ".1f"),
            f"{row['min_ms']:.1f}–{row['max_ms']:.1f}",
            fmt(row["client_p50_ms"], ".1f"),
            fmt(row["client_p99_ms"], ".1f"),
            None if row["target_ms"] is None else f"< {row['target_ms']:g}",
            report.verdict(row["pass"]) if row["pass"] is not None else None,
        )
    table.print()
    report.line()
    report.line("targets (server time):")
    verdicts = targets(summary)
    for label, passed, detail in verdicts:
        report.target_line(label, passed, detail)
    report.publish(
        options,
        NAME,
        PAPER,
        lambda axis: _draw(axis, summary),
        {
            "settings": settings,
            "server": "werkzeug make_server(threaded=True) on 127.0.0.1, child process",
            "data": {k: v for k, v in ready.items() if k != "port"}
            | {"aggregate_reads": aggregate_reads},
            "aggregate_read_requests": [
                {"endpoint": r["endpoint"], "server_ms": r["server_ms"]} for r in cold
            ],
            "load_average_before": load_before,
            "load_average_after": load_after,
            "summary": summary,
            "targets": [{"target": t, "passed": p, "detail": d} for t, p, d in verdicts],
            "records": records,
        },
        width=9.0,
    )


def targets(summary: list[dict[str, Any]]) -> list[tuple[str, bool | None, str]]:
    api = [r for r in summary if r["endpoint"].startswith("/api/")]
    worst = max(api, key=lambda r: r["p99_ms"])
    result = [
        (
            f"every API endpoint p99 < {API_TARGET_MS:g} ms",
            all(r["pass"] for r in api),
            f"worst {worst['endpoint']} p99 {worst['p99_ms']:.1f} ms",
        )
    ]
    page = next((r for r in summary if r["endpoint"] == TOPOLOGY_PAGE), None)
    if page is not None:
        result.append(
            (
                f"topology page < {PAGE_TARGET_MS:g} ms (p99)",
                page["pass"],
                f"p99 {page['p99_ms']:.1f} ms (p50 {page['p50_ms']:.1f})",
            )
        )
    return result


def _draw(axis: Any, summary: list[dict[str, Any]]) -> None:
    labels = [r["endpoint"].replace("/api/v1", "") for r in summary]
    xs = range(len(summary))
    axis.bar(xs, [r["p50_ms"] for r in summary], label="p50 (server)")
    axis.scatter(xs, [r["p99_ms"] for r in summary], marker="_", s=300, color="black",
                 label="p99 (server)")  # fmt: skip
    for x, row in zip(xs, summary, strict=True):
        if row["target_ms"] is not None:
            axis.hlines(row["target_ms"], x - 0.4, x + 0.4, colors="red", linestyles="dotted")
    axis.set_xticks(list(xs), labels, rotation=35, ha="right", fontsize=7)
    axis.set_yscale("log")
    axis.set_ylabel("ms per request (red: target)")
    axis.legend(fontsize=7, loc="upper center")
