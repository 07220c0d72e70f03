"""Paper 000 (Chatzistergiou & Viglas, CIKM 2014): ``td``, ``tl``, ``naive``, ``tdls`` and the
group/count code they share; ``docs/algorithms/000-topdown.md``."""
