"""The link model of ``links`` (``scheduler_py/algorithms/links.py``) checked against the veth
counters, for every scheduler's placement in ``bench cluster``.

With load-aware messaging off a shuffle is split evenly over its targets whatever the
placement, so where Nimbus put the executors (the run's ``placement``) is enough to predict
what each host sends and receives: :func:`model_topology` describes the JVM topologies the
way the brain's snapshot does (every edge the same declared weight, two executors per
component, one acker; ``topologies/README.md``, "JVM topologies"), and :func:`link_check`
compares each host's predicted share of the bytes sent between hosts with its measured share,
and names the busiest link the model predicts. Acking and Storm's framing are not in the
model (payload only), so the shares are compared, not the bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from scheduler_py.algorithms.links import link_loads
from scheduler_py.model.flows import component_order
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology

PARALLELISM = 2
"""Executors per component (the JVM topologies' ``bench.parallelism`` default)."""

SHAPES: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {
    "linear": (
        ("word",),
        (("word", "exclaim1"), ("exclaim1", "exclaim2"), ("exclaim2", "exclaim_output_3")),
    ),
    "diamond": (
        ("spout_head",),
        tuple(("spout_head", f"bolt_{i}") for i in range(1, 5))
        + tuple((f"bolt_{i}", "bolt_output_3") for i in range(1, 5)),
    ),
    "star": (
        ("spout_0", "spout_1"),
        (
            ("spout_0", "center"),
            ("spout_1", "center"),
            ("center", "bolt_output_0"),
            ("center", "bolt_output_1"),
        ),
    ),
}
"""Spouts and shuffle edges of the JVM Linear, Diamond and Star (``topologies/README.md``)."""

ACKER = "__acker"


def model_topology(label: str, cpu_per_executor: float = 10.0) -> Topology | None:
    """The topology ``label`` (``linear``, ``diamond-cpu``, …) as the brain's model sees it;
    ``None`` for a shape this module does not describe (word count: fields grouping)."""
    base = label.partition("-")[0]
    if base not in SHAPES:
        return None
    spouts, edges = SHAPES[base]
    names: list[str] = []
    for source, target in edges:
        for name in (source, target):
            if name not in names:
                names.append(name)
    user = [
        Component(n, PARALLELISM, cpu_per_executor * PARALLELISM, is_spout=n in spouts)
        for n in names
    ]
    components = (*user, Component(ACKER, 1, cpu_per_executor, is_system=True))
    streams = tuple(Edge(s, t, 1.0) for s, t in edges)
    acks = tuple(Edge(n, ACKER, 1.0) for n in names)
    return Topology(label, components, streams + acks, workers=len(names) * PARALLELISM + 1)


def _mapped(
    label: str,
    placement: Mapping[str, Sequence[str]],
    host_of_address: Mapping[str, str],
    model: str,
) -> tuple[Topology, dict[str, str]] | str:
    """The model of topology ``label`` and executor id -> host for a run's ``placement``, or
    why there is none (``model`` names the check in that message)."""
    topology = model_topology(label)
    if topology is None:
        return f"no {model} for {label!r}"
    node_of: dict[str, str] = {}
    for component in topology.components:
        slots = placement.get(component.id) or []
        if len(slots) != component.parallelism:
            return (
                f"{component.id}: {len(slots)} executor(s) placed, "
                f"the model has {component.parallelism}"
            )
        for index, slot in enumerate(slots):
            address = slot.rpartition(":")[0]
            if address not in host_of_address:
                return f"{slot}: not an emulated host's address"
            node_of[f"{component.id}#{index}"] = host_of_address[address]
    return topology, node_of


def host_work(
    label: str,
    placement: Mapping[str, Sequence[str]],
    host_of_address: Mapping[str, str],
    rack_of_host: Mapping[str, str],
    loadaware: bool,
) -> dict[str, Any]:
    """The CPU-bound analogue of :func:`link_check`: the tuples each host's user executors
    handle per spout-executor tuple (a spout executor counts 1), routed as Storm routes them
    (:func:`_flows`). With the same CPU per tuple in every component (the ``-cpu``
    topologies) the busiest host's work bounds the throughput; acking and emitting are not
    counted."""
    mapped = _mapped(label, placement, host_of_address, "model")
    if isinstance(mapped, str):
        return {"note": mapped}
    work = dict.fromkeys(sorted(rack_of_host), 0.0)
    handled, _ = _flows(*mapped, rack_of_host, loadaware)
    for host, tuples in handled:
        work[host] += tuples
    busiest = max(work, key=lambda h: (work[h], h))
    return {"host_work": work, "busiest_host": busiest, "busiest_work": work[busiest]}


def routed_links(
    label: str,
    placement: Mapping[str, Sequence[str]],
    host_of_address: Mapping[str, str],
    rack_of_host: Mapping[str, str],
    loadaware: bool,
    rack_link: float,
) -> dict[str, Any]:
    """The busiest link under the routing Storm does (:func:`_flows`): every host's link out
    and in, and every rack's uplink out and in relative to ``rack_link`` × a host link, in
    tuples per spout-executor tuple. With load-aware messaging on this is the strict-scope
    routing of an unloaded topology (``scheduler_py/model/loadaware.py``)."""
    mapped = _mapped(label, placement, host_of_address, "link model")
    if isinstance(mapped, str):
        return {"note": mapped}
    links: dict[str, float] = defaultdict(float)
    _, emits = _flows(*mapped, rack_of_host, loadaware)
    for sender, receiver, amount in emits:
        if sender == receiver:
            continue
        links[f"{sender} out"] += amount
        links[f"{receiver} in"] += amount
        send_rack, receive_rack = rack_of_host[sender], rack_of_host[receiver]
        if send_rack != receive_rack:
            links[f"{send_rack} out"] += amount / rack_link
            links[f"{receive_rack} in"] += amount / rack_link
    if not links:
        return {"busiest_link": 0.0, "busiest": None}
    busiest = max(links, key=lambda name: (links[name], name))
    return {"busiest_link": links[busiest], "busiest": busiest}


def _flows(
    topology: Topology,
    node_of: Mapping[str, str],
    rack_of_host: Mapping[str, str],
    loadaware: bool,
) -> tuple[list[tuple[str, float]], list[tuple[str, str, float]]]:
    """Each spout tuple followed executor by executor in topological order: a bolt emits on
    each edge what reaches it, and with load-aware messaging on an emit goes to the targets on
    the sender's host, else in its rack, else anywhere (:func:`_routed`; one worker per host
    here), with it off to every target. Returns ``(host, tuples handled)`` per executor and
    ``(sender host, receiver host, tuples)`` per emit."""
    received: dict[str, float] = defaultdict(float)
    handled: list[tuple[str, float]] = []
    emits: list[tuple[str, str, float]] = []
    for component in component_order(topology):
        spout = topology.component_by_id[component].is_spout
        targets_of = [e.target for e in topology.merged_edges if e.source == component]
        for executor in topology.executors_of(component):
            amount = 1.0 if spout else received[executor.id]
            host = node_of[executor.id]
            handled.append((host, amount))
            for target in targets_of:
                if topology.component_by_id[target].is_system:
                    continue
                candidates = [t.id for t in topology.executors_of(target)]
                chosen = (
                    _routed(host, candidates, node_of, rack_of_host) if loadaware else candidates
                )
                for receiver in chosen:
                    received[receiver] += amount / len(chosen)
                    emits.append((host, node_of[receiver], amount / len(chosen)))
    return handled, emits


def _routed(
    host: str, targets: list[str], node_of: Mapping[str, str], rack_of_host: Mapping[str, str]
) -> list[str]:
    """The targets of a load-aware shuffle from ``host``: the narrowest non-empty scope."""
    for same in (
        lambda t: node_of[t] == host,
        lambda t: rack_of_host[node_of[t]] == rack_of_host[host],
    ):
        local = [t for t in targets if same(t)]
        if local:
            return local
    return targets


def link_check(
    label: str,
    placement: Mapping[str, Sequence[str]],
    host_of_address: Mapping[str, str],
    rack_of_host: Mapping[str, str],
    sent: Mapping[str, int],
    rack_link: float,
) -> dict[str, Any]:
    """Predicted against measured share of the inter-host bytes each host sent, for the
    placement ``component -> ["address:port", …]`` (task order) a run recorded; ``note`` says
    why when the check cannot be made."""
    mapped = _mapped(label, placement, host_of_address, "link model")
    if isinstance(mapped, str):
        return {"note": mapped}
    topology, node_of = mapped
    nodes = tuple(Node(h, float("inf"), rack=rack_of_host[h]) for h in sorted(rack_of_host))
    problem = Problem(nodes, topology)
    loads, busiest = link_loads(problem, Placement(label, node_of), rack_link)
    predicted_total = sum(loads.node_out.values())
    measured_total = sum(sent.get(h, 0) for h in rack_of_host)
    if predicted_total <= 0 or measured_total <= 0:
        return {"busiest_link": busiest, "note": "no traffic between hosts to compare"}
    predicted = {h: loads.node_out.get(h, 0.0) / predicted_total for h in sorted(rack_of_host)}
    measured = {h: sent.get(h, 0) / measured_total for h in sorted(rack_of_host)}
    return {
        "busiest_link": busiest,
        "host_out_share_predicted": predicted,
        "host_out_share_measured": measured,
        "max_share_error": max(abs(predicted[h] - measured[h]) for h in predicted),
        "busiest_sender_predicted": max(predicted, key=lambda h: (predicted[h], h)),
        "busiest_sender_measured": max(measured, key=lambda h: (measured[h], h)),
    }
