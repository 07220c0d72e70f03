"""Paper 003 (Peng et al., "R-Storm: Resource-Aware Scheduling in Storm", Middleware 2015):
``rstorm``; ``docs/algorithms/003-rstorm.md``."""
