"""The simulated adaptation rounds behind the ``paper001_albic`` benchmark
(:mod:`scheduler_py.bench.paper001_albic` describes the experiments and the paper's numbers;
``docs/algorithms/001-albic.md`` the substitutes for the lost parameters).

* generators: §5.1's key-group loads and their drift, a key-group :class:`Problem`;
* :func:`quality`: the pure MILP vs Flux vs no rebalancing, round by round;
* :func:`scale_in`: integrated (MILP with ``remove_nodes``) vs drain-first scale-in;
* :func:`collocation`: ALBIC vs COLA-style re-optimisation with location-dependent load
  (:class:`CollocationJob`).

Each returns plain dictionaries of per-round numbers; printing and targets are the
benchmark's.
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.albic import milp as mm
from scheduler_py.algorithms.albic.baselines import cola, flux
from scheduler_py.algorithms.albic.plan import build_instance
from scheduler_py.bench import report
from scheduler_py.model.cost import imc_gain, total_traffic
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology

NODE_CPU = 100.0


# --------------------------------------------------------------------------- generators


def _ids(prefix: str, count: int) -> list[str]:
    width = len(str(max(count - 1, 0)))
    return [f"{prefix}{i:0{width}d}" for i in range(count)]


def quality_loads(
    nodes: int,
    kgs: int,
    rng: np.random.Generator,
    a: float = 0.5,
    vary: float = 0.2,
    b: float = 0.2,
    mean: float = 50.0,
) -> tuple[np.ndarray, np.ndarray]:
    """§5.1's generator: key groups spread evenly (kg i on node i mod nodes), load = the
    mean ×U(1-a, 1+a), then ``vary`` of the nodes (at least 2) changed by ±b (half up,
    half down). Returns (loads in % of a node, initial node per key group)."""  # fmt: skip
    home = np.arange(kgs) % nodes
    loads = mean * nodes / kgs * rng.uniform(1 - a, 1 + a, kgs)
    chosen = rng.choice(nodes, max(2, round(vary * nodes)), replace=False)
    for i, n in enumerate(chosen):
        loads[home == n] *= 1 + b if i % 2 == 0 else 1 - b
    return loads, home


def drift(loads: np.ndarray, home: np.ndarray, nodes: int, rng: np.random.Generator,
          share: float = 0.2, b: float = 0.2) -> np.ndarray:  # fmt: skip
    """One period of workload change: the key groups initially on ``share`` of the nodes
    (half of each node's key groups) scaled by U(1-b, 1+b); the total is renormalised so
    the average load stays put (an SPL-to-SPL fluctuation, not a trend)."""
    out = loads.copy()
    total = loads.sum()
    for n in rng.choice(nodes, max(2, round(share * nodes)), replace=False):
        idx = np.flatnonzero(home == n)
        pick = rng.choice(idx, max(1, len(idx) // 2), replace=False)
        out[pick] *= rng.uniform(1 - b, 1 + b)
    return out * total / out.sum()


def kg_problem(loads: np.ndarray, assign: np.ndarray, nodes: int) -> Problem:
    """A one-component topology with measured per-executor load and no traffic."""
    names = [f"kg#{i}" for i in range(len(loads))]
    topology = Topology(
        "job", (Component("kg", len(loads)),), (),
        executor_cpu=dict(zip(names, map(float, loads), strict=True)),
    )  # fmt: skip
    node_ids = _ids("n", nodes)
    current = Placement("job", {e: node_ids[a] for e, a in zip(names, assign, strict=True)})
    return Problem(tuple(Node(n, NODE_CPU, slots=2) for n in node_ids), topology, current)


def _assign_of(placement: Placement, count: int, nodes: int) -> np.ndarray:
    index = {n: i for i, n in enumerate(_ids("n", nodes))}
    return np.array([index[placement.node_of[f"kg#{i}"]] for i in range(count)])


def _ld(loads: np.ndarray, assign: np.ndarray, nodes: int,
        removing: np.ndarray | None = None) -> float:  # fmt: skip
    removing = np.zeros(nodes, dtype=bool) if removing is None else removing
    return mm.load_distance(mm.node_load(assign, loads, nodes), np.full(nodes, NODE_CPU), removing)


# --------------------------------------------------------------------------- quality


def quality(sizes, rounds: int, seed: int, time_limit: float) -> list[dict]:
    """LD after migrations per round for none / Flux / MILP (same load sequence)."""
    results = []
    for nodes, kgs, budget in sizes:
        rng = np.random.default_rng(seed + nodes)
        loads, home = quality_loads(nodes, kgs, rng)
        traj = {"none": home.copy(), "flux": home.copy(), "milp": home.copy()}
        series = defaultdict(list)
        moves = defaultdict(list)
        seconds = []
        for r in report.progress(range(rounds), desc=f"quality {nodes} nodes"):
            if r > 0:
                loads = drift(loads, home, nodes, rng)
            problem = kg_problem(loads, traj["flux"], nodes)
            kg, *_ = build_instance(problem, max_migrations=budget)
            new = flux(kg.balance)
            moves["flux"].append(int((new != traj["flux"]).sum()))
            traj["flux"] = new
            problem = kg_problem(loads, traj["milp"], nodes)
            started = time.perf_counter()
            placement = registry.run(
                "albic", problem,
                {"collocation": False, "max_migrations": budget, "time_limit": time_limit},
            )  # fmt: skip
            seconds.append(time.perf_counter() - started)
            new = _assign_of(placement, kgs, nodes)
            moves["milp"].append(int((new != traj["milp"]).sum()))
            traj["milp"] = new
            for name, assign in traj.items():
                series[name].append(_ld(loads, assign, nodes))
        results.append(
            {"nodes": nodes, "kgs": kgs, "budget": budget, "rounds": rounds,
             "ld": dict(series), "moves": dict(moves), "milp_seconds": seconds}
        )  # fmt: skip
    return results


# --------------------------------------------------------------------------- scale-in


def scale_in(nodes: int, kgs: int, removing: int, overloaded: int, budget: int,
             rounds: int, seed: int, time_limit: float) -> dict:  # fmt: skip
    """§5.1b: integrated (MILP with remove_nodes; drain floor 1, and budget/2) vs
    drain-first, LD over the remaining nodes and key groups left on R per round."""
    rng = np.random.default_rng(seed)
    loads, home = quality_loads(nodes, kgs, rng)
    hot = rng.choice(np.arange(removing, nodes), overloaded, replace=False)
    for n in hot:  # the overloaded nodes run at 100 %
        loads[home == n] *= NODE_CPU / loads[home == n].sum()
    marked = np.zeros(nodes, dtype=bool)
    marked[:removing] = True
    names = ",".join(_ids("n", nodes)[:removing])
    floors = {"integrated": 1, "integrated-floor": max(1, budget // 2)}
    out = {name: {"ld": [], "left": []} for name in (*floors, "drain-first")}
    current = {name: home.copy() for name in floors}
    baseline = home.copy()
    for _ in report.progress(range(rounds), desc="scale-in"):
        for name, floor in floors.items():
            placement = registry.run(
                "albic", kg_problem(loads, current[name], nodes),
                {"collocation": False, "max_migrations": budget, "time_limit": time_limit,
                 "remove_nodes": names, "drain_min": floor},
            )  # fmt: skip
            current[name] = _assign_of(placement, kgs, nodes)
        left = int(marked[baseline].sum())
        if left:
            baseline = _drain_first(loads, baseline, marked, budget)
        else:
            placement = registry.run(
                "albic", kg_problem(loads, baseline, nodes),
                {"collocation": False, "max_migrations": budget, "time_limit": time_limit,
                 "remove_nodes": names},
            )  # fmt: skip
            baseline = _assign_of(placement, kgs, nodes)
        for name, assign in (*current.items(), ("drain-first", baseline)):
            out[name]["ld"].append(_ld(loads, assign, nodes, marked))
            out[name]["left"].append(int(marked[assign].sum()))
    return {"nodes": nodes, "kgs": kgs, "removing": removing, "overloaded": overloaded,
            "budget": budget, "floors": floors, **out}  # fmt: skip


def _drain_first(loads, assign, marked, budget) -> np.ndarray:
    """The non-integrated baseline [O]: spend the budget moving key groups off R, one at a
    time onto the currently least-loaded remaining node."""
    a = assign.copy()
    nodes = len(marked)
    for _ in range(budget):
        on_r = np.flatnonzero(marked[a])
        if not len(on_r):
            break
        g = on_r[np.argmax(loads[on_r])]
        node_load = mm.node_load(a, loads, nodes)
        a[g] = int(np.argmin(np.where(marked, np.inf, node_load)))
    return a


# --------------------------------------------------------------------------- collocation


class CollocationJob:
    """Operators in pairs (2j -> 2j+1) with ``per_op`` key groups each; a ``share`` of
    each upstream operator's key groups is One-To-One with the same index downstream, the
    rest spreads uniformly over the downstream key groups (Full Partitioning)."""

    def __init__(self, nodes: int, ops: int, per_op: int, share: float, seed: int,
                 worst_initial: bool) -> None:  # fmt: skip
        self.nodes, self.ops, self.per_op = nodes, ops, per_op
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.names = [f"o{o:02d}#{k}" for o in range(ops) for k in range(per_op)]
        count = ops * per_op
        self.base_mean = 30.0 * nodes / count  # 30 % of a node on average ...
        self.base = self.base_mean * rng.uniform(0.5, 1.5, count)
        rate = rng.uniform(0.5, 1.5, count) * 10.0
        self.kappa = self.base_mean / 10.0  # ... plus 30 % when nothing is collocated
        self.traffic: dict[tuple[int, int], float] = {}
        one_to_one = round(share * per_op)
        for o in range(0, ops - 1, 2):
            for k in range(per_op):
                g = o * per_op + k
                if k < one_to_one:
                    self.traffic[(g, (o + 1) * per_op + k)] = rate[g]
                else:
                    for h in range(per_op):
                        self.traffic[(g, (o + 1) * per_op + h)] = rate[g] / per_op
        if worst_initial:  # partners on different nodes, as little collocation as possible
            self.initial = np.array([(k + o) % nodes for o in range(ops) for k in range(per_op)])
        else:
            self.initial = rng.permutation(np.arange(count) % nodes)

    def measured(self, assign: np.ndarray) -> np.ndarray:
        load = self.base.copy()
        for (g, h), rate in self.traffic.items():
            if assign[g] != assign[h]:
                load[g] += self.kappa * rate
                load[h] += self.kappa * rate
        return load

    def perturb(self, assign: np.ndarray, rng: np.random.Generator, b: float = 0.2) -> None:
        """§5.3: the load of 20 % of the nodes changes by a random percentage."""
        for n in rng.choice(self.nodes, max(1, round(0.2 * self.nodes)), replace=False):
            self.base[assign == n] *= rng.uniform(1 - b, 1 + b)
        self.base *= self.base_mean * len(self.base) / self.base.sum()

    def problem(self, assign: np.ndarray) -> Problem:
        load = self.measured(assign)
        components = tuple(Component(f"o{o:02d}", self.per_op) for o in range(self.ops))
        edges = tuple(
            Edge(f"o{o:02d}", f"o{o + 1:02d}", 1.0, "fields") for o in range(0, self.ops - 1, 2)
        )
        topology = Topology(
            "job", components, edges,
            executor_cpu=dict(zip(self.names, map(float, load), strict=True)),
            pair_traffic={(self.names[g], self.names[h]): r for (g, h), r in self.traffic.items()},
        )  # fmt: skip
        node_ids = _ids("n", self.nodes)
        current = Placement("job", {e: node_ids[a] for e, a in zip(self.names, assign,
                                                                    strict=True)})  # fmt: skip
        return Problem(tuple(Node(n, NODE_CPU, slots=2) for n in node_ids), topology, current)

    def assign_of(self, placement: Placement) -> np.ndarray:
        index = {n: i for i, n in enumerate(_ids("n", self.nodes))}
        return np.array([index[placement.node_of[e]] for e in self.names])


def collocation(config: dict, rounds: int, seed: int, time_limit: float) -> dict:
    """ALBIC vs COLA over rounds: CF, LD (decision loads, and re-measured after the
    moves), LI and migrations per round."""
    out = {}
    for algorithm in ("albic", "cola"):
        job = CollocationJob(config["nodes"], config["ops"], config["per_op"], config["share"],
                             seed, config["worst"])  # fmt: skip
        rng = np.random.default_rng(seed + 1)
        assign = job.initial.copy()
        initial_load = job.measured(assign).sum()
        rec = defaultdict(list)
        for r in report.progress(range(rounds), desc=f"{config['label']} {algorithm}"):
            if r > 0:
                job.perturb(assign, rng)
            problem = job.problem(assign)
            started = time.perf_counter()
            if algorithm == "albic":
                placement = registry.run(
                    "albic", problem,
                    {"max_migrations": config["budget"], "time_limit": time_limit,
                     "seed": seed + r},
                )  # fmt: skip
                new = job.assign_of(placement)
            else:
                kg, *_ = build_instance(problem, max_migrations=config["budget"])
                symmetric: dict[tuple[int, int], float] = defaultdict(float)
                for (g, h), rate in kg.traffic.items():
                    symmetric[(min(g, h), max(g, h))] += rate
                new = cola(kg.balance, dict(symmetric), 10.0)
            rec["seconds"].append(time.perf_counter() - started)
            decision = job.measured(assign)
            rec["moves"].append(int((new != assign).sum()))
            assign = new
            node_of = {e: f"n{a}" for e, a in zip(job.names, assign, strict=True)}
            rec["cf"].append(100 * imc_gain(problem.topology, node_of)
                             / total_traffic(problem.topology))  # fmt: skip
            rec["ld"].append(_ld(decision, assign, job.nodes))
            after = job.measured(assign)
            rec["ld_measured"].append(_ld(after, assign, job.nodes))
            rec["li"].append(float(after.sum() / initial_load))
        out[algorithm] = dict(rec)
    return {**config, "rounds": rounds, **out}
