"""Storm's DefaultScheduler over every supervisor-id order: where it would put a JVM topology
and the busiest link that placement gives, for each order (docs/evaluation.md, "Fresh cluster
instances").

DefaultScheduler hands a new topology to ``EvenScheduler.scheduleTopology`` (Storm's
``storm-server/.../scheduler/EvenScheduler.java``; ``sortSlots`` is quoted in docs/evaluation.md,
"Evaluation on an emulated network"): the free slots are grouped by supervisor id in a sorted
map, each group sorted by port, the groups ordered by their number of free slots (a stable
sort, so equal groups keep the id order) and interleaved, first slot of every supervisor, then
the second…; the first ``topology.workers`` slots are taken, and the executors, sorted by
their first task id, go round-robin over them. Task ids follow the sorted component ids
(``__acker`` first). Supervisor ids are random UUIDs written when a supervisor first starts,
so the placement, and with it the busiest link, is a draw over the orders of the hosts: this
module enumerates them all (6 hosts: 720 orders) with
:func:`scheduler_py.bench.cluster_links.routed_links`, whose busiest link times the acked
tuples/s was constant within ±9 % over every scheduler's runs
(``docs/results/emulated-network/algorithms-3reps/link-check.txt``).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from scheduler_py.bench.cluster_links import model_topology, routed_links

MAX_ORDERS = 40_320
"""Orders enumerated at most (8 hosts); above that the distribution is not computed."""


def even_placement(label: str, host_order: Sequence[str], workers: int) -> dict[str, list[str]]:
    """Where ``EvenScheduler`` puts topology ``label`` on an empty cluster whose supervisors,
    one per host with equally many free slots, sort by id as ``host_order``:
    ``component -> ["host:slot", …]`` in task order (the shape of a run's ``placement``)."""
    topology = model_topology(label)
    if topology is None:
        raise ValueError(f"no model of topology {label!r} (expected linear, diamond or star)")
    if workers < 1 or not host_order:
        raise ValueError(f"expected at least one worker and one host, got {workers} and 0")
    # interleaved slots: every host's first slot, then every host's second, …
    slots = [
        f"{host}:{index}" for index in range(-(-workers // len(host_order))) for host in host_order
    ][:workers]
    placement: dict[str, list[str]] = {}
    position = 0
    for component in sorted(topology.components, key=lambda c: c.id):
        for _ in range(component.parallelism):
            placement.setdefault(component.id, []).append(slots[position % len(slots)])
            position += 1
    return placement


def order_of_placement(
    label: str, placement: Mapping[str, Sequence[str]], workers: int
) -> list[str] | None:
    """The host order (first ``workers`` slots) a recorded DefaultScheduler ``placement``
    (``component -> ["address:port", …]``) was dealt from, or ``None`` if it is not an
    ``EvenScheduler`` round-robin."""
    topology = model_topology(label)
    if topology is None:
        return None
    dealt: list[str] = []
    for component in sorted(topology.components, key=lambda c: c.id):
        dealt.extend(placement.get(component.id) or [])
    order = dealt[:workers]
    if len(dealt) < workers or any(
        slot != order[index % workers] for index, slot in enumerate(dealt)
    ):
        return None
    return order


def link_distribution(
    label: str,
    rack_of_host: Mapping[str, str],
    loadaware: bool,
    rack_link: float,
    workers: int,
) -> dict[str, Any]:
    """The busiest link (:func:`routed_links`, tuples per spout-executor tuple) of
    DefaultScheduler's placement over every order of the hosts ``rack_of_host``:
    ``{"orders": n, "links": {busiest link: share of the orders}}``, or ``{"note": why}``."""
    hosts = sorted(rack_of_host)
    count = math.factorial(len(hosts))
    if count > MAX_ORDERS:
        return {"note": f"{len(hosts)} hosts: {count} orders, more than {MAX_ORDERS}"}
    if model_topology(label) is None:
        return {"note": f"no link model for {label!r}"}
    identity = {h: h for h in hosts}
    found: Counter[float] = Counter()
    for order in itertools.permutations(hosts):
        placement = even_placement(label, order, workers)
        links = routed_links(label, placement, identity, rack_of_host, loadaware, rack_link)
        found[round(links["busiest_link"], 6)] += 1
    return {
        "orders": count,
        "links": {link: found[link] / count for link in sorted(found)},
    }


def predicted_throughputs(
    distribution: Mapping[float, float], constant: float
) -> list[tuple[float, float, float]]:
    """``(busiest link, share of the orders, predicted acked/s = constant / link)`` rows,
    best throughput first; a link of 0 (nothing crosses hosts) predicts no limit (inf)."""
    rows = [
        (link, share, constant / link if link > 0 else float("inf"))
        for link, share in distribution.items()
    ]
    return sorted(rows, key=lambda row: -row[2])


def median_of_distribution(rows: Sequence[tuple[float, float, float]]) -> float | None:
    """The median predicted throughput over the orders (``rows`` from
    :func:`predicted_throughputs`): the value at which half of the orders are at least as
    fast, interpolating between two values when a share boundary falls exactly at half."""
    ascending = sorted(rows, key=lambda row: row[2])
    seen = 0.0
    for index, (_, share, value) in enumerate(ascending):
        seen += share
        if abs(seen - 0.5) < 1e-9 and index + 1 < len(ascending):
            return (value + ascending[index + 1][2]) / 2
        if seen > 0.5:
            return value
    return ascending[-1][2] if ascending else None


def hosts_check(
    runs: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], hosts: Any
) -> list[dict[str, Any]]:
    """:func:`session_check` on the emulated hosts as a ``bench cluster`` result records them
    (its ``emulated_hosts``); none on the loopback cluster (``hosts`` ``None``)."""
    if not isinstance(hosts, Mapping) or not hosts.get("hosts"):
        return []
    host_mbit = float(hosts.get("host_mbit") or 0.0)
    return session_check(
        runs,
        rows,
        {h["name"]: h["rack"] for h in hosts["hosts"]},
        float(hosts.get("interrack_mbit") or 0.0) / host_mbit if host_mbit > 0 else 1.0,
        {h["address"]: h["name"] for h in hosts["hosts"]},
    )


def session_check(
    runs: Sequence[Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    rack_of_host: Mapping[str, str],
    rack_link: float,
    host_of_address: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Per network-bound topology and load-aware setting of a ``bench cluster`` session that
    ran DefaultScheduler: the busiest-link distribution over every supervisor-id order, the
    throughput it predicts with the session's constant (median of acked/s × busiest link over
    all its runs of that topology and setting), the median over the orders, and each measured
    DefaultScheduler run — its cluster instance, supervisor order, whether ``even_placement``
    of that order is the placement Nimbus made, its busiest link and throughput."""
    checks = []
    keys = dict.fromkeys(
        (r["topology"], r["loadaware"])
        for r in runs
        if r["scheduler"] == "default" and r.get("kind") == "network" and not r.get("error")
    )
    for topology, loadaware in keys:
        mine = [
            r
            for r in runs
            if r["topology"] == topology and r["loadaware"] == loadaware and not r.get("error")
        ]
        products = sorted(
            r["throughput"] * r["routed_link"]["busiest_link"]
            for r in mine
            if r.get("throughput") and (r.get("routed_link") or {}).get("busiest_link")
        )
        workers = int(mine[0]["conf"].get("topology.workers", len(rack_of_host)))
        distribution = link_distribution(topology, rack_of_host, loadaware, rack_link, workers)
        check: dict[str, Any] = {
            "topology": topology,
            "loadaware": loadaware,
            "workers": workers,
            "orders": distribution.get("orders"),
            "links": distribution.get("links"),
            "note": distribution.get("note"),
            "constant": products[len(products) // 2] if products else None,
            "constant_range": [products[0], products[-1]] if products else None,
        }
        if check["links"] and check["constant"]:
            predicted = predicted_throughputs(check["links"], check["constant"])
            check["predicted"] = [list(row) for row in predicted]
            check["predicted_median"] = median_of_distribution(predicted)
        check["measured"] = [
            _measured(r, workers, host_of_address) for r in mine if r["scheduler"] == "default"
        ]
        best = [
            row
            for row in rows
            if row["topology"] == topology
            and row["loadaware"] == loadaware
            and row["scheduler"].startswith("brain:")
            and row["scheduler"] != "brain:adaptive"
            and row.get("throughput_median")
        ]
        if best:
            top = max(best, key=lambda row: row["throughput_median"])
            check["best_brain"] = top["scheduler"]
            check["best_brain_throughput"] = top["throughput_median"]
        checks.append(check)
    return checks


def _measured(
    run: Mapping[str, Any], workers: int, host_of_address: Mapping[str, str]
) -> dict[str, Any]:
    order = run.get("supervisor_order")
    recorded = {
        component: [host_of_address.get(s.rpartition(":")[0]) for s in slots]
        for component, slots in (run.get("placement") or {}).items()
    }
    as_modelled = None
    if order and recorded:
        expected = even_placement(run["topology"], order, workers)
        as_modelled = all(
            [s.rpartition(":")[0] for s in slots] == recorded.get(component)
            for component, slots in expected.items()
        )
    return {
        "index": run["index"],
        "cluster_instance": run.get("cluster_instance"),
        "supervisor_order": order,
        "as_modelled": as_modelled,
        "busiest_link": (run.get("routed_link") or {}).get("busiest_link"),
        "throughput": run.get("throughput"),
    }
