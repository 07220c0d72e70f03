"""Local-cluster and test tooling, not part of the brain's runtime (it ships in the
``scheduler-py-bench`` distribution with the benchmarks, ``deploy/bench_dist.py``):
``stormctl`` (Nimbus readiness, status, kill for ``deploy/*.sh``), the ZooKeeper test server,
the emulated hosts' state and counters, the message-id ledger, Storm daemons for tests, and
``jvm_topologies`` (build and submit the JVM benchmark topologies of ``topologies/jvm/``)."""
