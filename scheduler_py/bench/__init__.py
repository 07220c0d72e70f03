"""Benchmarks (`make bench`, `scheduler-py bench NAME`): each prints a table with the
paper's numbers beside ours and ratios against baselines measured in the same run.

A module ``bench/<name>.py`` listed in :data:`scheduler_py.bench.registry.MODULES` is selectable
by name.
"""

from __future__ import annotations
