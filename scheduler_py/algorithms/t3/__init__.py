"""Paper 002 (Eskandari, Mair, Huang, Eyers, "T3-Scheduler"): ``t3``;
``docs/algorithms/002-t3.md``."""
