"""DefaultScheduler's placement over supervisor-id orders (scheduler_py/bench/default_orders.py)."""

from __future__ import annotations

import pytest

from scheduler_py.bench.cluster_links import routed_links
from scheduler_py.bench.default_orders import (
    even_placement,
    link_distribution,
    median_of_distribution,
    order_of_placement,
    predicted_throughputs,
    session_check,
)

RACKS = {f"h{i}": "/rack-1" if i <= 3 else "/rack-2" for i in range(1, 7)}
ADDRESS = {f"198.18.{49 if i <= 3 else 50}.{i}": f"h{i}" for i in range(1, 7)}
RECORDED = {
    # docs/results/emulated-network/fresh-instances/cluster.json, run 1 (DefaultScheduler, Linear)
    "__acker": ["198.18.50.6:9750"],
    "exclaim1": ["198.18.49.2:9710", "198.18.50.4:9730"],
    "exclaim2": ["198.18.49.3:9720", "198.18.50.5:9740"],
    "exclaim_output_3": ["198.18.49.1:9700", "198.18.50.6:9750"],
    "word": ["198.18.49.2:9710", "198.18.50.4:9730"],
}
RUN_1_ORDER = ["h6", "h2", "h4", "h3", "h5", "h1"]


def hosts(placement: dict[str, list[str]]) -> dict[str, list[str]]:
    return {c: [ADDRESS[s.rpartition(":")[0]] for s in slots] for c, slots in placement.items()}


def test_even_placement_deals_sorted_components_round_robin() -> None:
    # 9 executors in task order (__acker, exclaim1 ×2, exclaim2 ×2, exclaim_output_3 ×2,
    # word ×2) over the 6 slots: the 7th executor wraps to the first slot
    placement = even_placement("linear", RUN_1_ORDER, 6)
    assert {c: [s.partition(":")[0] for s in v] for c, v in placement.items()} == hosts(RECORDED)
    assert placement["__acker"] == ["h6:0"] and placement["exclaim_output_3"] == ["h1:0", "h6:0"]
    # more workers than hosts: every host's second slot after every host's first
    wide = even_placement("linear", ["h1", "h2"], 3)
    assert wide["__acker"] == ["h1:0"] and wide["exclaim1"] == ["h2:0", "h1:1"]


def test_order_of_placement_inverts_even_placement() -> None:
    assert order_of_placement("linear", hosts(RECORDED), 6) == RUN_1_ORDER
    not_dealt = hosts(RECORDED) | {"word": ["h1", "h1"]}
    assert order_of_placement("linear", not_dealt, 6) is None
    assert order_of_placement("wordcount", hosts(RECORDED), 6) is None


def test_busiest_link_of_two_orders_checked_by_hand() -> None:
    # run 1's order keeps every hop in a rack: each link carries at most one tuple's flow
    identity = {h: h for h in RACKS}
    local = even_placement("linear", RUN_1_ORDER, 6)
    assert routed_links("linear", local, identity, RACKS, True, 0.5)["busiest_link"] == 1.0
    # h1..h6 in order: exclaim1 on h2, h3 (rack 1) sends to exclaim2 on h4, h5 (rack 2),
    # two flows over the half-speed rack link: 4.0
    crossing = even_placement("linear", sorted(RACKS), 6)
    assert routed_links("linear", crossing, identity, RACKS, True, 0.5)["busiest_link"] == 4.0


def test_link_distribution_covers_every_order() -> None:
    found = link_distribution("linear", RACKS, True, 0.5, 6)
    assert found["orders"] == 720
    assert sum(found["links"].values()) == pytest.approx(1.0)
    # 288 of the 720 orders (0.4) keep every Linear hop inside a rack
    assert found["links"][1.0] == pytest.approx(0.4)
    assert "note" in link_distribution("wordcount", RACKS, True, 0.5, 6)
    many = {f"h{i}": "/r" for i in range(9)}
    assert "more than" in link_distribution("linear", many, True, 0.5, 9)["note"]


def test_predicted_median_over_orders() -> None:
    rows = predicted_throughputs({1.0: 0.4, 4.0: 0.6}, 2800.0)
    assert rows == [(1.0, 0.4, 2800.0), (4.0, 0.6, 700.0)]
    assert median_of_distribution(rows) == 700.0
    even = predicted_throughputs({1.0: 0.5, 2.0: 0.5}, 1000.0)
    assert median_of_distribution(even) == 750.0
    assert median_of_distribution([]) is None


def run(index: int, scheduler: str, throughput: float, link: float, **extra: object) -> dict:
    return {
        "index": index,
        "topology": "linear",
        "kind": "network",
        "scheduler": scheduler,
        "loadaware": True,
        "conf": {"topology.workers": 6},
        "throughput": throughput,
        "routed_link": {"busiest_link": link},
        **extra,
    }


def test_session_check_compares_the_measured_instances_with_the_model() -> None:
    runs = [
        run(1, "default", 2800.0, 1.0, placement=RECORDED, supervisor_order=RUN_1_ORDER,
            cluster_instance=1),
        run(2, "default", 700.0, 4.0, placement=RECORDED, supervisor_order=sorted(RACKS),
            cluster_instance=2),
        run(3, "brain:online", 2900.0, 1.0),
        run(4, "ras-default", 1400.0, 2.0, error="TimeoutError: spouts"),
    ]  # fmt: skip
    rows = [
        {"topology": "linear", "loadaware": True, "scheduler": "brain:online",
         "throughput_median": 2900.0},
    ]  # fmt: skip
    (check,) = session_check(runs, rows, RACKS, 0.5, ADDRESS)
    assert check["orders"] == 720 and check["constant"] == 2800.0
    assert check["constant_range"] == [2800.0, 2900.0]
    assert check["predicted_median"] == 700.0
    assert check["best_brain"] == "brain:online" and check["best_brain_throughput"] == 2900.0
    first, second = check["measured"]
    assert first["as_modelled"] is True and first["cluster_instance"] == 1
    # run 2 claims an order its placement was not dealt from
    assert second["as_modelled"] is False and second["busiest_link"] == 4.0
    assert session_check([run(3, "brain:online", 2900.0, 1.0)], rows, RACKS, 0.5, ADDRESS) == []
