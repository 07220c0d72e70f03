"""Paper 002: T3-Scheduler (two-level traffic-aware placement). Notes:
``docs/algorithms/002-t3.md``."""
