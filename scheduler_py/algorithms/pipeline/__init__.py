"""Paper 004: pipeline scheduling (matrix scheme, communication refinement, pipelined
steps). Notes: ``docs/algorithms/004-pipeline.md``."""
