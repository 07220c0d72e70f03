"""The dashboard at the size of scheduler-py bench dashboard_api: the topology answer shows the
busiest executor pairs and the component matrix of all of them (scheduler_py/dashboard/
topology_view.py), the aggregate is cleaned once per document (sources.py), and the plan log
is read from its end and reused while unchanged (planlog.py), aggregates are re-read off the
request path when asked (prefetch.py)."""

from __future__ import annotations

import json
import random
import time
from collections import deque

import pytest

from scheduler_py.dashboard import planlog
from scheduler_py.dashboard.app import create_app
from scheduler_py.dashboard.planlog import PlanLogFile
from scheduler_py.dashboard.prefetch import Prefetcher
from scheduler_py.dashboard.sources import Sources
from tests.dashboard_fakes import TOKEN, Clock, FakeAggregates, FakeBrain, aggregate


def _many_pairs() -> dict:
    document = aggregate()
    document["pairs"] = [
        {"src": [s, s], "dst": [d, d], "tuples_per_s": float(10 * s + d),
         "src_component": "split" if s < 10 else "spout", "dst_component": "count"}
        for s in (7, 8, 9, 10, 11)
        for d in (4, 5, 6)
    ]  # fmt: skip
    return document


def _client(document: dict):
    sources = Sources(FakeBrain(), None, FakeAggregates({"wc-1": document}), TOKEN, Clock())
    return create_app(sources).test_client()


def test_topology_shows_the_busiest_pairs_and_sums_all_per_component():
    client = _client(_many_pairs())
    data = client.get("/api/v1/topologies/wc?pairs=4").get_json()
    assert (data["pairs_total"], data["pairs_shown"]) == (15, 4)
    assert [e["tuples_per_s"] for e in data["edges"]] == [116.0, 115.0, 114.0, 106.0]
    assert len(data["matrix"]["cells"]) == 4
    matrix = data["component_matrix"]
    assert matrix["components"] == ["count", "split", "spout"]
    totals = {(matrix["components"][i], matrix["components"][j]): v for i, j, v in matrix["cells"]}
    split = sum(10 * s + d for s in (7, 8, 9) for d in (4, 5, 6))
    spout = sum(10 * s + d for s in (10, 11) for d in (4, 5, 6))
    assert totals == {("split", "count"): split, ("spout", "count"): spout}
    everything = client.get("/api/v1/topologies/wc").get_json()
    assert everything["pairs_shown"] == 15 and everything["component_matrix"] == matrix


def test_component_of_a_pair_falls_back_to_the_aggregate_executors_then_unknown():
    client = _client(aggregate())  # pairs without components; executors 10, 7, 6 named
    matrix = client.get("/api/v1/topologies/wc").get_json()["component_matrix"]
    named = {(matrix["components"][i], matrix["components"][j]): v for i, j, v in matrix["cells"]}
    assert named == {("spout", "split"): 100.0, ("split", "(unknown)"): 50.0,
                     ("(unknown)", "count"): 30.0}  # fmt: skip


@pytest.mark.parametrize("value", ["-1", "x", "1000001", "1.5"])
def test_malformed_pairs_parameter_is_400(value):
    response = _client(_many_pairs()).get(f"/api/v1/topologies/wc?pairs={value}")
    assert response.status_code == 400 and response.get_json()["field"] == "pairs"


def test_an_aggregate_is_cleaned_once_per_document(monkeypatch):
    from scheduler_py.dashboard import aggregate_shape

    calls = []
    real = aggregate_shape.clean
    monkeypatch.setattr(aggregate_shape, "clean", lambda d: calls.append(d) or real(d))
    aggregates = FakeAggregates({"wc-1": _many_pairs()})
    sources = Sources(FakeBrain(), None, aggregates, TOKEN, Clock())
    first, _ = sources.aggregate("wc-1")
    second, _ = sources.aggregate("wc-1")
    assert first is second and len(calls) == 1
    aggregates.documents["wc-1"] = _many_pairs()  # a new read from ZooKeeper
    third, _ = sources.aggregate("wc-1")
    assert third is not first and third == first and len(calls) == 2


def _read_all_then_tail(path, limit):
    """What the plan log reader did before it read backwards: every line, keep the last."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        tail = deque(lines, maxlen=limit)
    result = []
    for line in tail:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            result.append(entry)
    return result


def test_plan_log_read_backwards_equals_reading_it_all(tmp_path, monkeypatch):
    monkeypatch.setattr(planlog, "CHUNK", 7)  # many chunk boundaries inside lines
    path = tmp_path / "plans.jsonl"
    rng = random.Random(3)
    for _ in range(200):
        lines = [
            rng.choice([json.dumps({"k": k, "pad": "é" * rng.randint(0, 9)}), "torn{", "[1]", ""])
            for k in range(rng.randint(0, 12))
        ]
        path.write_text("\n".join(lines) + rng.choice(["", "\n"]), encoding="utf-8")
        log = PlanLogFile(path)
        for limit in (rng.randint(1, 15) for _ in range(4)):
            assert log.entries(limit) == _read_all_then_tail(path, limit), (lines, limit)


def test_plan_log_is_reparsed_only_when_the_file_changes(tmp_path, monkeypatch):
    path = tmp_path / "plans.jsonl"
    path.write_text("".join(json.dumps({"k": k}) + "\n" for k in range(5)))
    log = PlanLogFile(path)
    parsed = []
    real = planlog._parse
    monkeypatch.setattr(planlog, "_parse", lambda line: parsed.append(line) or real(line))
    assert [e["k"] for e in log.entries(3)] == [2, 3, 4] and len(parsed) == 3
    assert [e["k"] for e in log.entries(2)] == [3, 4] and len(parsed) == 3  # reused
    with path.open("a") as out:
        out.write(json.dumps({"k": 5}) + "\n")
    assert [e["k"] for e in log.entries(2)] == [4, 5] and len(parsed) == 5


class SlowAggregates(FakeAggregates):
    """Counts reads; each read returns a new document (as ZooKeeper does after its cache)."""

    def __init__(self, documents):
        super().__init__(documents)
        self.reads = 0

    def aggregate(self, topology_id):
        self.reads += 1
        document = super().aggregate(topology_id)
        return None if document is None else json.loads(json.dumps(document))


def _wait_for(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_prefetched_aggregates_are_read_off_the_request_path():
    aggregates = SlowAggregates({"wc-1": _many_pairs()})
    sources = Sources(FakeBrain(), None, aggregates, TOKEN, Clock(), prefetch_secs=0.05)
    first, error = sources.aggregate("wc-1")  # the first request reads
    assert error is None and len(first["pairs"]) == 15 and aggregates.reads == 1
    _wait_for(lambda: aggregates.reads >= 3)  # then the thread re-reads, every 0.05 s
    aggregates.down = True
    _wait_for(lambda: sources.aggregate("wc-1")[1] is not None)
    reads = aggregates.reads
    assert "ZooKeeper" in sources.aggregate("wc-1")[1] and aggregates.reads - reads <= 1
    aggregates.down = False
    _wait_for(lambda: sources.aggregate("wc-1")[1] is None)
    sources._prefetcher.close()


def test_prefetcher_forgets_topologies_nobody_asks_for():
    reads = []
    prefetcher = Prefetcher(lambda t: (reads.append(t) or {"t": t}, None), 0.02, forget_after=0.1)
    assert prefetcher.get("a") == ({"t": "a"}, None)
    _wait_for(lambda: len(reads) >= 3)
    time.sleep(0.2)  # "a" not asked for: forgotten, no more reads
    count = len(reads)
    time.sleep(0.1)
    assert len(reads) == count
    prefetcher.close()


def test_without_prefetching_every_request_reads_the_source():
    aggregates = SlowAggregates({"wc-1": _many_pairs()})
    sources = Sources(FakeBrain(), None, aggregates, TOKEN, Clock())
    sources.aggregate("wc-1")
    sources.aggregate("wc-1")
    assert aggregates.reads == 2
