"""The uniform-shuffle link model checked against per-host bytes (``bench/cluster_links.py``)."""

from __future__ import annotations

import pytest

from scheduler_py.bench.cluster_links import host_work, link_check, model_topology, routed_links

HOSTS = {"198.18.17.1": "h1", "198.18.17.2": "h2", "198.18.18.3": "h3"}
RACKS = {"h1": "/rack-1", "h2": "/rack-1", "h3": "/rack-2"}


def test_model_topologies_have_the_jvm_shapes():
    diamond = model_topology("diamond-cpu")
    assert diamond is not None
    assert len([e for e in diamond.executors if e.component != "__acker"]) == 12
    assert {c.id for c in diamond.components if c.is_spout} == {"spout_head"}
    assert model_topology("wordcount") is None


def test_linear_split_over_two_hosts_predicts_who_sends_what():
    # word, exclaim1 on h1; exclaim2, exclaim_output_3 on h2: only exclaim1 -> exclaim2 crosses,
    # all of it from h1
    placement = {
        "word": ["198.18.17.1:6700"] * 2,
        "exclaim1": ["198.18.17.1:6700"] * 2,
        "exclaim2": ["198.18.17.2:6700"] * 2,
        "exclaim_output_3": ["198.18.17.2:6700"] * 2,
        "__acker": ["198.18.17.2:6700"],
    }
    sent = {"h1": 900, "h2": 100, "h3": 0}  # acking flows back from h2
    check = link_check("linear", placement, HOSTS, RACKS, sent, rack_link=0.5)
    assert check["host_out_share_predicted"] == {"h1": 1.0, "h2": 0.0, "h3": 0.0}
    assert check["host_out_share_measured"]["h1"] == pytest.approx(0.9)
    assert check["max_share_error"] == pytest.approx(0.1)
    assert check["busiest_sender_predicted"] == check["busiest_sender_measured"] == "h1"
    assert check["busiest_link"] == pytest.approx(2.0)  # one edge's whole flow (2 spouts)


def test_what_cannot_be_checked_is_named():
    assert "no link model" in link_check("wordcount", {}, HOSTS, RACKS, {}, 0.5)["note"]
    partial = {"word": ["198.18.17.1:6700"]}
    assert "1 executor(s) placed" in link_check("linear", partial, HOSTS, RACKS, {}, 0.5)["note"]
    stranger = {
        c: ["10.0.0.1:6700"] * 2 for c in ("word", "exclaim1", "exclaim2", "exclaim_output_3")
    } | {"__acker": ["10.0.0.1:6700"]}
    assert "not an emulated host" in link_check("linear", stranger, HOSTS, RACKS, {}, 0.5)["note"]


def test_host_work_follows_the_load_aware_rack_scope():
    # Diamond as brain:rstorm placed it on the emulated network: the spouts sit in rack 1
    # (h1, h2) beside bolt_1, bolt_2; bolt_3 and bolt_4 have one copy in rack 1 (h3) and one
    # in rack 2 (h4). Load-aware routing finds no worker- or host-local bolt_3/bolt_4 and
    # keeps to the rack: h3 gets all of them and h4 nothing.
    hosts = {"a1": "h1", "a2": "h2", "a3": "h3", "b4": "h4"}
    racks = {"h1": "/rack-1", "h2": "/rack-1", "h3": "/rack-1", "h4": "/rack-2"}
    placement = {
        "spout_head": ["a1:1", "a2:1"],
        "bolt_1": ["a1:1", "a2:1"],
        "bolt_2": ["a1:1", "a2:1"],
        "bolt_3": ["a3:1", "b4:1"],
        "bolt_4": ["a3:1", "b4:1"],
        "bolt_output_3": ["a3:1", "b4:1"],
        "__acker": ["b4:1"],
    }
    routed = host_work("diamond-cpu", placement, hosts, racks, loadaware=True)
    # h3: bolt_3#0 and bolt_4#0 get both spouts' tuples (2 each); bolt_output_3#0 gets theirs
    # (local) and, as the rack-local copy, all of bolt_1's and bolt_2's (8): 12. h1, h2: a
    # spout (1) and the bolt_1, bolt_2 copies beside it (1 each)
    assert routed["host_work"] == {"h1": 3.0, "h2": 3.0, "h3": 12.0, "h4": 0.0}
    assert routed["busiest_host"] == "h3"
    uniform = host_work("diamond-cpu", placement, hosts, racks, loadaware=False)
    assert uniform["host_work"] == {"h1": 3.0, "h2": 3.0, "h3": 6.0, "h4": 6.0}
    assert "no model" in host_work("wordcount", {}, hosts, racks, True)["note"]


@pytest.mark.parametrize(
    ("sinks", "busiest_link", "busiest"),
    [
        # both slices' sinks on h2, in rack 1 with h1: h2's link in carries both slices (2.0)
        (["198.18.17.2:6700"] * 2, 2.0, "h2 in"),
        # the sinks in rack 2: both rack uplinks (half a host link) carry both slices: 2 / 0.5
        # (ties name the last link: rack 2's way in)
        (["198.18.18.3:6700"] * 2, 4.0, "/rack-2 in"),
    ],
)
def test_routed_links_follow_the_load_aware_scope(sinks, busiest_link, busiest):
    # word, exclaim1, exclaim2 of both slices on h1: load-aware routing keeps them on h1, and
    # only exclaim2 -> exclaim_output_3 leaves it (1 per spout-executor tuple and slice)
    placement = {
        "word": ["198.18.17.1:6700"] * 2,
        "exclaim1": ["198.18.17.1:6700"] * 2,
        "exclaim2": ["198.18.17.1:6700"] * 2,
        "exclaim_output_3": sinks,
        "__acker": ["198.18.17.1:6700"],
    }
    routed = routed_links("linear", placement, HOSTS, RACKS, loadaware=True, rack_link=0.5)
    assert routed["busiest_link"] == pytest.approx(busiest_link)
    assert routed["busiest"] == busiest
    assert "no link model" in routed_links("wordcount", {}, HOSTS, RACKS, True, 0.5)["note"]
