"""Paper 003: R-Storm, resource-aware scheduling. Notes: ``docs/algorithms/003-rstorm.md``."""
