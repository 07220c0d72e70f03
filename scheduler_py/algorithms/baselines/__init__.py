"""Baselines every table compares against: Storm's EvenScheduler (``even``), METIS graph
partitioning (``metis``), Aniello et al.'s online scheduler (``online``) and the exact
optimum (``optimal``). Notes: ``docs/algorithms/baselines.md``."""
