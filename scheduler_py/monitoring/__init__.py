"""Runtime monitoring, Python side: window records published by the worker monitors into
ZooKeeper → PySpark aggregation → measured costs for the brain.

Contract: ``docs/monitoring-format.md``. Reading order: :mod:`.records` (parse and validate
one window record), :mod:`.zk` (the ZooKeeper layout), :mod:`.aggregate` (the PySpark job),
:mod:`.measured` (aggregate → model costs), :mod:`.cli` (``scheduler-py aggregate``).
See ``scheduler_py/monitoring/README.md``.
"""
