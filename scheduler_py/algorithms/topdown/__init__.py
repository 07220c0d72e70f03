"""Paper 000: group-aware top-down allocation (``td``, paper §4), the task-level
baseline (``tl``, §3.2), naive fusion (``naive``, §3.1), and our local search on top
(``tdls``). Notes: ``docs/algorithms/000-topdown.md``."""
