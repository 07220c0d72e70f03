"""Paper 001: ALBIC, load balancing with a migration budget and collocation.
Notes: ``docs/algorithms/001-albic.md``."""
