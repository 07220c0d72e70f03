"""Properties every registered algorithm must have (hypothesis).

* a problem that is feasible with room to spare gets a complete placement within every
  node's capacity (checked by the registry's verification and again here);
* a problem where one executor fits no node gets an InfeasibleError naming the component
  and the resource;
* the same input gives the same output.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms.registry import algorithms, run
from scheduler_py.model.cost import violations
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology

# Capacity-blind by design (Storm's EvenScheduler): it may overload a node and is then
# rejected by the registry; its own tests cover it.
CAPACITY_BLIND = {"even"}
NAMES = sorted(name for name in algorithms() if name not in CAPACITY_BLIND)
FAST_PARAMS = {"optimal": {"time_limit": 10.0}}


@st.composite
def roomy_problems(draw) -> Problem:
    groups = draw(st.integers(1, 4))
    components = tuple(
        Component(
            f"c{i}",
            draw(st.integers(1, 4)),
            cpu=draw(st.floats(1.0, 60.0)),
            memory_mb=draw(st.sampled_from([0.0, 64.0, 256.0])),
            is_spout=i == 0,
        )
        for i in range(groups)
    )
    edges = tuple(
        Edge(f"c{i}", f"c{j}", draw(st.floats(0.5, 20.0)))
        for i in range(groups)
        for j in range(i + 1, groups)
        if draw(st.booleans()) or j == i + 1
    )
    total_cpu = sum(c.cpu for c in components)
    nodes = tuple(
        Node(
            f"n{k}",
            cpu=total_cpu * draw(st.floats(1.3, 2.0)),  # room above T3's u_max = 0.8
            slots=4,
            memory_mb=4096.0,
            rack=f"r{k % 2}",
        )
        for k in range(draw(st.integers(2, 5)))
    )
    executors = sum(c.parallelism for c in components)
    return Problem(nodes, Topology("t", components, edges, workers=executors))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=roomy_problems())
def test_roomy_problems_get_complete_feasible_placements(name, problem):
    placement = run(name, problem, FAST_PARAMS.get(name))
    assert set(placement.node_of) == set(problem.topology.executor_by_id)
    assert violations(problem, placement) == []
    again = run(name, problem, FAST_PARAMS.get(name))
    assert dict(again.node_of) == dict(placement.node_of)


@pytest.mark.parametrize("name", [*NAMES, *sorted(CAPACITY_BLIND)])
def test_an_executor_that_fits_no_node_is_named(name):
    topology = Topology(
        "t",
        (Component("small", 2, cpu=20.0, is_spout=True), Component("huge", 1, cpu=180.0)),
        (Edge("small", "huge", 5.0),),
        workers=3,
    )
    problem = Problem((Node("n1", 100.0), Node("n2", 150.0)), topology)
    with pytest.raises(InfeasibleError) as caught:
        run(name, problem, FAST_PARAMS.get(name))
    assert caught.value.resource == "cpu"
    assert caught.value.component == "huge"
    assert "huge" in str(caught.value) and "CPU" in str(caught.value)
