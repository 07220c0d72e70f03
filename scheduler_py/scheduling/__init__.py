"""The scheduling layer: the one round loop between the model/algorithms below and the edges
above (ARCHITECTURE.md).

* :mod:`~scheduler_py.scheduling.state` — the cluster as a round sees it (typed, no Thrift);
* :mod:`~scheduler_py.scheduling.view` — one topology's model problem in a round;
* :mod:`~scheduler_py.scheduling.claims` — capacity accounting between topologies;
* :mod:`~scheduler_py.scheduling.planning` — one plan under a time budget, with fallback;
* :mod:`~scheduler_py.scheduling.verified` — the one path every placement for Storm takes:
  finish (workers, slots), verify (capacity, ports, ``topology.workers``), score;
* :mod:`~scheduler_py.scheduling.round` — the round itself;
* :mod:`~scheduler_py.scheduling.documents` — the same round for JSON problem documents;
* :mod:`~scheduler_py.scheduling.proposal` — re-plans of running topologies;
* :mod:`~scheduler_py.scheduling.interfaces` — the typed interfaces the edges meet through.
"""
