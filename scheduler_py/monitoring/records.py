"""Window records (``docs/monitoring-format.md`` §1): parse, validate, flatten.

A record arrives as the gzip of its UTF-8 JSON (the data of a ``w-<window_end_ms>`` znode).
:func:`parse_window` returns a :class:`WindowRecord` or raises :class:`CorruptRecord` with
a reason an operator can act on: bad gzip, bad JSON, a missing field, a wrong type, a
negative CPU time, count, port or timestamp, an unsupported ``"v"``, a window that ends
before it starts, overlapping executors, a traffic source task that is not an executor of
the publishing worker. Task ids may be negative (Storm's ``__system`` executor is
``[-1, -1]``). Fields the contract does not name are ignored (a newer monitor may add
some); ``truncated_pairs`` is optional.

Version 2 (contract §1.1) adds Storm's own per-task counts (:class:`TaskCounts`), the topology's
routes (:class:`Route`), ``mode``, ``sample_rate``, ``load_aware_messaging``, ``tuple_bytes``,
``reset_counters`` and the worker's Netty totals ``netty_sent_messages`` and
``netty_written_bytes`` (absent when the monitor could not read them); version-1 records stay
valid (they are exact-mode records with no counts). A count that is negative does not make the
record corrupt (its CPU is still good): the record keeps it out of
:attr:`WindowRecord.task_counts` and says why in :attr:`WindowRecord.counts_problem`, and the
traffic estimate prices the edges it touches as declared (``monitoring/pair_estimate.py``).

:func:`flatten` turns valid records into the three row lists the PySpark job reads
(:data:`RECORD_COLUMNS`, :data:`EXECUTOR_COLUMNS`, :data:`TRAFFIC_COLUMNS`).
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

VERSION = 1
"""The version of a record with exact traffic only (the hooks' v1)."""
VERSION_COUNTS = 2
"""The version of a record with Storm's per-task counts (contract §1.1)."""
VERSIONS = (VERSION, VERSION_COUNTS)
MODES = ("counts", "exact")
COUNT_MAPS = ("emitted", "transferred", "executed", "execute_ms", "acked", "failed")
"""The maps of one ``task_counts`` entry, each ``key -> number``."""
MAX_DECOMPRESSED_BYTES = 16 * 1024 * 1024
"""A record is well under 1 MB compressed; anything inflating past this is refused."""


class CorruptRecord(ValueError):
    """A window record that cannot be used; the message says why."""


@dataclass(frozen=True)
class ExecutorSample:
    task_start: int
    task_end: int
    component: str
    thread_cpu_ms: float
    subprocess_cpu_ms: float
    subprocess_pids: tuple[int, ...] = ()

    @property
    def tasks(self) -> range:
        """The executor's task ids, ``task_start`` to ``task_end`` inclusive."""
        return range(self.task_start, self.task_end + 1)


@dataclass(frozen=True)
class TrafficSample:
    src: int
    dst: int
    stream: str
    tuples: float
    bytes: float


@dataclass(frozen=True)
class TaskCounts:
    """What Storm counted for one task in one window (contract §1.1, ``task_counts``):
    per output stream (``emitted``, ``transferred``) or per ``"<source component>:<stream>"``
    input (``executed``, ``execute_ms``); Storm's sampled estimates."""

    task: int
    component: str
    emitted: Mapping[str, float] = field(hash=False)
    transferred: Mapping[str, float] = field(hash=False)
    executed: Mapping[str, float] = field(hash=False)
    execute_ms: Mapping[str, float] = field(hash=False)
    acked: Mapping[str, float] = field(hash=False)
    failed: Mapping[str, float] = field(hash=False)


@dataclass(frozen=True)
class Route:
    """One subscription of the user topology: ``target`` reads ``component``'s ``stream``
    through ``grouping`` (contract §1.1, ``routes``)."""

    component: str
    stream: str
    target: str
    grouping: str
    fields: tuple[str, ...] = ()


def input_key(component: str, stream: str) -> str:
    """Storm's key of an input in ``executed``: ``"<source component>:<stream>"``."""
    return f"{component}:{stream}"


def split_input(key: str) -> tuple[str, str]:
    """The inverse of :func:`input_key`: the last ``:`` separates component and stream."""
    component, _, stream = key.rpartition(":")
    return component, stream


@dataclass(frozen=True)
class WindowRecord:
    """One worker's window (contract §1)."""

    topology_id: str
    supervisor_id: str
    host: str
    port: int
    seq: int
    window_start_ms: int
    window_end_ms: int
    worker_cpu_ms: float
    overhead_cpu_ms: float
    executors: tuple[ExecutorSample, ...]
    traffic: tuple[TrafficSample, ...] = ()
    truncated_pairs: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)
    version: int = VERSION
    mode: str = "exact"
    """``counts`` or ``exact`` (a version-1 record is exact: its traffic came from the hook)"""
    sample_rate: float | None = None
    load_aware_messaging: bool | None = None
    task_counts: tuple[TaskCounts, ...] = field(default=(), hash=False)
    routes: tuple[Route, ...] = ()
    tuple_bytes: Mapping[str, float] = field(default_factory=dict, hash=False)
    reset_counters: int = 0
    netty_sent_messages: int | None = None
    """messages the worker's Netty clients sent to other workers in the window"""
    netty_written_bytes: int | None = None
    """bytes the worker's Netty client threads wrote in the window (Storm's framing and the
    ack messages included)"""
    counts_problem: str | None = None
    """why this record's counts are unusable (a negative count), ``None`` when they are"""

    @property
    def worker(self) -> str:
        """The worker's znode name: ``<supervisor-id>:<port>``."""
        return f"{self.supervisor_id}:{self.port}"

    @property
    def duration_ms(self) -> int:
        return self.window_end_ms - self.window_start_ms


# --------------------------------------------------------------------------- parsing


def decode(data: bytes) -> Any:
    """gzip → UTF-8 → JSON, with :class:`CorruptRecord` for every failure."""
    if not data:
        raise CorruptRecord("empty znode data")
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip container only
        text = inflater.decompress(data, MAX_DECOMPRESSED_BYTES)
        if inflater.unconsumed_tail:
            raise CorruptRecord(f"record inflates past {MAX_DECOMPRESSED_BYTES} bytes")
        if not inflater.eof:
            raise CorruptRecord("bad gzip: truncated stream")
    except zlib.error as error:
        raise CorruptRecord(f"bad gzip: {error}") from error
    try:
        return json.loads(text.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise CorruptRecord(f"bad UTF-8: {error}") from error
    except ValueError as error:
        raise CorruptRecord(f"bad JSON: {error}") from error


def encode(document: Mapping[str, Any]) -> bytes:
    """The inverse of :func:`decode` (gzip of compact UTF-8 JSON); ``mtime=0`` so equal
    documents give equal bytes."""
    text = json.dumps(document, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)


def parse_window(data: bytes) -> WindowRecord:
    """Decode and validate one window record (see the module docstring)."""
    return validate(decode(data))


def validate(doc: Any) -> WindowRecord:
    """Validate an already-decoded record (a dict) against contract §1."""
    if not isinstance(doc, dict):
        raise CorruptRecord(f"a record is a JSON object, found {type(doc).__name__}")
    version = doc.get("v")
    if version not in VERSIONS or isinstance(version, bool):
        raise CorruptRecord(f"unsupported record version v={version!r} (this reader: 1, 2)")
    start = _int(doc, "window_start_ms", 0)
    end = _int(doc, "window_end_ms", 0)
    if end <= start:
        raise CorruptRecord(f"window_end_ms {end} is not after window_start_ms {start}")
    executors = tuple(_executor(i, e) for i, e in enumerate(_list(doc, "executors")))
    traffic = tuple(_traffic(i, t) for i, t in enumerate(_list(doc, "traffic")))
    ranges = sorted((e.task_start, e.task_end) for e in executors)
    for (_, end_a), (start_b, _) in itertools.pairwise(ranges):
        if start_b <= end_a:
            raise CorruptRecord(f"executors overlap: task ranges {ranges}")
    for sample in traffic:
        if not _covers(ranges, sample.src):
            raise CorruptRecord(
                f"traffic source task {sample.src} is not an executor of this worker "
                f"(executors {ranges})"
            )
    truncated = doc.get("truncated_pairs", 0)
    if not _is_int(truncated) or truncated < 0:
        raise CorruptRecord(f"truncated_pairs must be an integer >= 0, found {truncated!r}")
    counts = _counts_fields(doc, ranges) if version == VERSION_COUNTS else {}
    return WindowRecord(
        topology_id=_str(doc, "topology_id"),
        supervisor_id=_str(doc, "supervisor_id"),
        host=_str(doc, "host"),
        port=_int(doc, "port", 1),
        seq=_int(doc, "seq", 0),
        window_start_ms=start,
        window_end_ms=end,
        worker_cpu_ms=_num(doc, "worker_cpu_ms"),
        overhead_cpu_ms=_num(doc, "overhead_cpu_ms"),
        executors=executors,
        traffic=traffic,
        truncated_pairs=int(truncated),
        extra={k: v for k, v in doc.items() if k not in _RECORD_FIELDS},
        version=version,
        **counts,
    )


def _counts_fields(doc: Mapping[str, Any], ranges: list[tuple[int, int]]) -> dict[str, Any]:
    """The version-2 fields of ``doc`` (contract §1.1) as :class:`WindowRecord` arguments."""
    mode = doc.get("mode")
    if mode not in MODES:
        raise CorruptRecord(f"mode must be one of {', '.join(MODES)}, found {mode!r}")
    rate = doc.get("sample_rate")
    if rate is not None:
        rate = _num(doc, "sample_rate")
    aware = doc.get("load_aware_messaging")
    if aware is not None and not isinstance(aware, bool):
        raise CorruptRecord(f"load_aware_messaging must be true or false, found {aware!r}")
    resets = doc.get("reset_counters", 0)
    if not _is_int(resets) or resets < 0:
        raise CorruptRecord(f"reset_counters must be an integer >= 0, found {resets!r}")
    if not isinstance(doc.get("task_counts", []), list):
        raise CorruptRecord("task_counts must be a list")
    problems: list[str] = []
    counts = []
    for index, item in enumerate(doc.get("task_counts") or []):
        entry = _task_counts(index, item, problems)
        if not _covers(ranges, entry.task):
            raise CorruptRecord(
                f"task_counts[{index}]: task {entry.task} is not an executor of this worker "
                f"(executors {ranges})"
            )
        counts.append(entry)
    routes = doc.get("routes") or []
    if not isinstance(routes, list):
        raise CorruptRecord("routes must be a list")
    sizes = doc.get("tuple_bytes") or {}
    netty = {name: _optional_count(doc, name) for name in NETTY_FIELDS}
    return netty | {
        "mode": mode,
        "sample_rate": rate,
        "load_aware_messaging": aware,
        "task_counts": () if problems else tuple(counts),
        "routes": tuple(_route(i, r) for i, r in enumerate(routes)),
        "tuple_bytes": _number_map(sizes, "tuple_bytes", None),
        "reset_counters": int(resets),
        "counts_problem": "; ".join(problems[:3]) if problems else None,
    }


def _optional_count(doc: Mapping[str, Any], name: str) -> int | None:
    """An optional integer >= 0 of ``doc`` (``None`` when absent)."""
    value = doc.get(name)
    if value is None:
        return None
    if not _is_int(value) or value < 0:
        raise CorruptRecord(f"{name} must be an integer >= 0 when present, found {value!r}")
    return int(value)


def _task_counts(index: int, item: Any, problems: list[str]) -> TaskCounts:
    where = f"task_counts[{index}]"
    if not isinstance(item, dict):
        raise CorruptRecord(f"{where} is not an object")
    task = _int(item, "task", None, where)
    component = _str(item, "component", where)
    maps = {
        name: _number_map(item.get(name) or {}, f"task {task} {name}", problems)
        for name in COUNT_MAPS
    }
    return TaskCounts(task=task, component=component, **maps)


def _number_map(value: Any, where: str, problems: list[str] | None) -> dict[str, float]:
    """``{str: finite number}``; a negative number is a counter that went backwards: noted in
    ``problems`` (the record's counts are then not used), or corrupt without ``problems``."""
    if not isinstance(value, dict):
        raise CorruptRecord(f"{where} must be an object, found {type(value).__name__}")
    result = {}
    for key, number in value.items():
        if (
            isinstance(number, bool)
            or not isinstance(number, (int, float))
            or not math.isfinite(number)
        ):
            raise CorruptRecord(f"{where}[{key!r}] must be a number, found {number!r}")
        if number < 0:
            if problems is None:
                raise CorruptRecord(f"{where}[{key!r}] is negative ({number})")
            problems.append(f"{where}[{key!r}] = {number:g} (a counter went backwards)")
        result[str(key)] = float(number)
    return result


def _route(index: int, item: Any) -> Route:
    where = f"routes[{index}]"
    if not isinstance(item, dict):
        raise CorruptRecord(f"{where} is not an object")
    fields = item.get("fields") or []
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise CorruptRecord(f"{where}.fields must be a list of names, found {fields!r}")
    return Route(
        component=_str(item, "component", where),
        stream=_str(item, "stream", where),
        target=_str(item, "target", where),
        grouping=_str(item, "grouping", where),
        fields=tuple(fields),
    )


def _executor(index: int, item: Any) -> ExecutorSample:
    where = f"executors[{index}]"
    if not isinstance(item, dict):
        raise CorruptRecord(f"{where} is not an object")
    start = _int(item, "task_start", None, where)  # Storm's __system executor is [-1, -1]
    end = _int(item, "task_end", None, where)
    if end < start:
        raise CorruptRecord(f"{where}: task_end {end} < task_start {start}")
    pids = item.get("subprocess_pids")
    if not isinstance(pids, list) or not all(_is_int(p) and p > 0 for p in pids):
        raise CorruptRecord(f"{where}.subprocess_pids must be a list of pids, found {pids!r}")
    return ExecutorSample(
        task_start=start,
        task_end=end,
        component=_str(item, "component", where),
        thread_cpu_ms=_num(item, "thread_cpu_ms", where),
        subprocess_cpu_ms=_num(item, "subprocess_cpu_ms", where),
        subprocess_pids=tuple(int(p) for p in pids),
    )


def _traffic(index: int, item: Any) -> TrafficSample:
    where = f"traffic[{index}]"
    if not isinstance(item, dict):
        raise CorruptRecord(f"{where} is not an object")
    return TrafficSample(
        src=_int(item, "src", None, where),
        dst=_int(item, "dst", None, where),
        stream=_str(item, "stream", where),
        tuples=_num(item, "tuples", where),
        bytes=_num(item, "bytes", where),
    )


def _covers(ranges: list[tuple[int, int]], task: int) -> bool:
    return any(start <= task <= end for start, end in ranges)


def _missing(where: str, key: str) -> CorruptRecord:
    return CorruptRecord(f"missing field {where + '.' if where else ''}{key}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(doc: Mapping[str, Any], key: str, minimum: int | None, where: str = "") -> int:
    if key not in doc:
        raise _missing(where, key)
    value = doc[key]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not _is_int(value):
        raise CorruptRecord(
            f"{where + '.' if where else ''}{key} must be an integer, found {value!r}"
        )
    if minimum is not None and value < minimum:
        raise CorruptRecord(
            f"{where + '.' if where else ''}{key} must be >= {minimum}, found {value}"
        )
    return value


def _num(doc: Mapping[str, Any], key: str, where: str = "") -> float:
    if key not in doc:
        raise _missing(where, key)
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CorruptRecord(
            f"{where + '.' if where else ''}{key} must be a number, found {value!r}"
        )
    if value < 0:
        raise CorruptRecord(f"{where + '.' if where else ''}{key} is negative ({value})")
    return float(value)


def _str(doc: Mapping[str, Any], key: str, where: str = "") -> str:
    if key not in doc:
        raise _missing(where, key)
    value = doc[key]
    if not isinstance(value, str) or not value:
        raise CorruptRecord(f"{where + '.' if where else ''}{key} must be a non-empty string")
    return value


def _list(doc: Mapping[str, Any], key: str) -> list:
    if key not in doc:
        raise _missing("", key)
    value = doc[key]
    if not isinstance(value, list):
        raise CorruptRecord(f"{key} must be a list, found {type(value).__name__}")
    return value


# --------------------------------------------------------------------------- flattening

RECORD_COLUMNS = (
    "record_id",
    "topology_id",
    "supervisor_id",
    "host",
    "port",
    "seq",
    "window_start_ms",
    "window_end_ms",
    "worker_cpu_ms",
    "overhead_cpu_ms",
    "truncated_pairs",
)
EXECUTOR_COLUMNS = (
    "record_id",
    "task_start",
    "task_end",
    "component",
    "thread_cpu_ms",
    "subprocess_cpu_ms",
)
TRAFFIC_COLUMNS = ("record_id", "src", "dst", "stream", "tuples", "bytes")
_COUNTS_FIELDS = (
    "mode",
    "sample_rate",
    "load_aware_messaging",
    "task_counts",
    "routes",
    "tuple_bytes",
    "reset_counters",
)
NETTY_FIELDS = ("netty_sent_messages", "netty_written_bytes")
"""the worker's Netty totals in a version-2 record (contract §1.1), both optional"""
_RECORD_FIELDS = (
    frozenset(RECORD_COLUMNS[1:])
    | {"v", "executors", "traffic"}
    | frozenset(_COUNTS_FIELDS)
    | frozenset(NETTY_FIELDS)
)
"""Top-level fields of a window record; anything else is kept in ``WindowRecord.extra``."""


@dataclass
class FlatRecords:
    """Valid records as rows for the PySpark job (``record_id`` joins the three lists)."""

    records: list[tuple] = field(default_factory=list)
    executors: list[tuple] = field(default_factory=list)
    traffic: list[tuple] = field(default_factory=list)


def flatten(
    records: Iterable[WindowRecord], first_id: int = 0, traffic_after_ms: int | None = None
) -> FlatRecords:
    """Rows of ``records``. ``traffic_after_ms``: traffic rows only of records whose window
    ends after it (the aggregation counts traffic of in-window records only; the other
    records still give their executors, for the destination-task map and missing workers),
    so the retained history is not shipped to Spark every cycle."""
    flat = FlatRecords()
    for record_id, record in enumerate(records, start=first_id):
        flat.records.append(
            (
                record_id,
                record.topology_id,
                record.supervisor_id,
                record.host,
                record.port,
                record.seq,
                record.window_start_ms,
                record.window_end_ms,
                float(record.worker_cpu_ms),
                float(record.overhead_cpu_ms),
                record.truncated_pairs,
            )
        )
        for e in record.executors:
            flat.executors.append(
                (
                    record_id,
                    e.task_start,
                    e.task_end,
                    e.component,
                    float(e.thread_cpu_ms),
                    float(e.subprocess_cpu_ms),
                )
            )
        if traffic_after_ms is not None and record.window_end_ms <= traffic_after_ms:
            continue
        for t in record.traffic:
            flat.traffic.append(
                (record_id, t.src, t.dst, t.stream, float(t.tuples), float(t.bytes))
            )
    return flat


def record_document(record: WindowRecord) -> dict[str, Any]:
    """The contract JSON of ``record`` (what a worker monitor publishes)."""
    doc: dict[str, Any] = {
        "v": record.version,
        "topology_id": record.topology_id,
        "supervisor_id": record.supervisor_id,
        "host": record.host,
        "port": record.port,
        "seq": record.seq,
        "window_start_ms": record.window_start_ms,
        "window_end_ms": record.window_end_ms,
        "worker_cpu_ms": record.worker_cpu_ms,
        "overhead_cpu_ms": record.overhead_cpu_ms,
        "executors": [
            {
                "task_start": e.task_start,
                "task_end": e.task_end,
                "component": e.component,
                "thread_cpu_ms": e.thread_cpu_ms,
                "subprocess_cpu_ms": e.subprocess_cpu_ms,
                "subprocess_pids": list(e.subprocess_pids),
            }
            for e in record.executors
        ],
        "traffic": [
            {"src": t.src, "dst": t.dst, "stream": t.stream, "tuples": t.tuples, "bytes": t.bytes}
            for t in record.traffic
        ],
    }
    if record.truncated_pairs:
        doc["truncated_pairs"] = record.truncated_pairs
    if record.version == VERSION_COUNTS:
        doc.update(_counts_document(record))
    doc.update(record.extra)
    return doc


def _counts_document(record: WindowRecord) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "mode": record.mode,
        "task_counts": [
            {"task": c.task, "component": c.component}
            | {name: dict(getattr(c, name)) for name in COUNT_MAPS}
            for c in record.task_counts
        ],
        "routes": [
            {"component": r.component, "stream": r.stream, "target": r.target}
            | {"grouping": r.grouping}
            | ({"fields": list(r.fields)} if r.fields else {})
            for r in record.routes
        ],
        "reset_counters": record.reset_counters,
    }
    if record.sample_rate is not None:
        doc["sample_rate"] = record.sample_rate
    if record.load_aware_messaging is not None:
        doc["load_aware_messaging"] = record.load_aware_messaging
    if record.tuple_bytes:
        doc["tuple_bytes"] = dict(record.tuple_bytes)
    for name in NETTY_FIELDS:
        if getattr(record, name) is not None:
            doc[name] = getattr(record, name)
    return doc
