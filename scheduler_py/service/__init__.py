"""The Thrift edge of the brain: Storm snapshots in, per-topology plans out.

Reading order of one scheduling round: :mod:`wire` (the IDL) → :mod:`snapshot` (Thrift
snapshot → model problems) → :mod:`planner` (algorithm per topology → placements → plans)
→ :mod:`server` (the thriftpy2 service Nimbus's shim calls).
"""
