"""Host → rack mapping (model/racks.py) in the ``storm.network.topography.plugin``
convention, and R-Storm reading racks from the nodes it produces."""

from __future__ import annotations

import json

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.model import Component, Edge, InvalidProblemError, Node, Problem, Topology
from scheduler_py.model.racks import (
    DEFAULT_RACK,
    RackMapping,
    alternate_mapping,
    apply_racks,
    default_mapping,
    load_rack_mapping,
    mapping_from_topography,
    parse_rack_mapping,
)


def test_default_mapping_puts_every_host_in_one_rack():
    mapping = default_mapping()
    assert mapping.resolve(["a", "b"]) == {"a": DEFAULT_RACK, "b": DEFAULT_RACK}
    assert Node("x", 1).rack == DEFAULT_RACK
    assert default_mapping("/default-rack").rack_of("a") == "/default-rack"


def test_alternate_mapping_alternates_sorted_hosts():
    mapping = alternate_mapping(["h3", "h1", "h2", "h4"])
    assert mapping.resolve(["h1", "h2", "h3", "h4"]) == {
        "h1": "RACK1",
        "h2": "RACK2",
        "h3": "RACK1",
        "h4": "RACK2",
    }
    assert mapping.topography(["h1", "h2", "h3", "h4"]) == {
        "RACK1": ["h1", "h3"],
        "RACK2": ["h2", "h4"],
    }


def test_text_table_format_with_comments_and_default():
    text = """
    # host      rack
    node-a      /rack-1
    node-b      /rack-2   # trailing comment
    """
    mapping = parse_rack_mapping(text, default="/unknown")
    assert mapping.resolve(["node-a", "node-b", "node-c"]) == {
        "node-a": "/rack-1",
        "node-b": "/rack-2",
        "node-c": "/unknown",
    }


@pytest.mark.parametrize(
    "document",
    [
        {"h1": "r1", "h2": "r2"},
        {"r1": ["h1"], "r2": ["h2"]},
        {"ClusterInfo": [{"cluster": "r1", "nodes": ["h1"]}, {"cluster": "r2", "nodes": ["h2"]}]},
    ],
)
def test_json_formats(document):
    mapping = parse_rack_mapping(json.dumps(document))
    assert mapping.resolve(["h1", "h2"]) == {"h1": "r1", "h2": "r2"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("h1 r1 extra", "expected 'host rack'"),
        ("h1 r1\nh1 r2", "already in rack"),
        ('{"r1": ["h1"], "r2": ["h1"]}', "is in racks"),
        ("[1, 2]", "expected"),
        ("{not json", "invalid JSON"),
    ],
)
def test_malformed_mappings_are_rejected(text, message):
    with pytest.raises(InvalidProblemError, match=message):
        parse_rack_mapping(text)


def test_load_from_file(tmp_path):
    path = tmp_path / "racks.txt"
    path.write_text("h1 r1\nh2 r2\n")
    assert load_rack_mapping(path).rack_of("h2") == "r2"
    with pytest.raises(InvalidProblemError, match="cannot read"):
        load_rack_mapping(tmp_path / "missing.txt")


def test_mapping_from_topography_rejects_strings():
    with pytest.raises(InvalidProblemError, match="must list hosts"):
        mapping_from_topography({"r1": "h1"})


def test_apply_racks_by_id_or_host():
    nodes = (Node("sup-1", 100.0), Node("sup-2", 100.0))
    by_host = apply_racks(nodes, {"host-1": "r1"}, host_of={"sup-1": "host-1", "sup-2": "host-2"})
    assert [n.rack for n in by_host] == ["r1", DEFAULT_RACK]
    by_id = apply_racks(nodes, RackMapping({"sup-2": "r2"}))
    assert [n.rack for n in by_id] == [DEFAULT_RACK, "r2"]
    assert by_id[1].cpu == 100.0  # everything else unchanged


def test_rstorm_uses_racks_from_the_mapping():
    # 4 nodes, AlternateRackDNSToSwitchMapping: n1, n3 in RACK1; n2, n4 in RACK2.
    nodes = apply_racks(
        (Node(f"n{i}", 100.0, memory_mb=1000.0) for i in range(1, 5)),
        alternate_mapping([f"n{i}" for i in range(1, 5)]),
    )
    topology = Topology(
        "t",
        (Component("S", 2, 160.0, 200.0, is_spout=True), Component("A", 2, 160.0, 200.0)),
        (Edge("S", "A", 1.0),),
    )
    placement = registry.run("rstorm", Problem(nodes, topology))
    # S#0 on the Ref node n1 (RACK1, lowest rack id on a tie); A#0 no longer fits n1 and
    # goes to n3, the node in the same rack; then RACK2 (n2, n4)
    assert dict(placement.node_of) == {"S#0": "n1", "A#0": "n3", "S#1": "n2", "A#1": "n4"}
    assert placement.report["ref_rack"] == "RACK1"
