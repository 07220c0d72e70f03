"""Baselines the papers compare against: ``even`` (Storm's default), ``metis``, ``online``
(Aniello, Baldoni, Querzoni, DEBS 2013) and ``optimal`` (the exact optimum of paper 000 §7.3);
``docs/algorithms/baselines.md``."""
