"""Paper 001 (Madsen, Zhou, Cao, "Integrative Dynamic Reconfiguration in a Parallel Stream
Processing Engine", 2016): ``albic``; ``docs/algorithms/001-albic.md``."""
