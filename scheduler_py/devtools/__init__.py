"""Local-cluster and test tooling, not part of the brain's runtime: ``stormctl`` (Nimbus
readiness, status, kill for ``deploy/*.sh``), the placement table, the ZooKeeper test server,
and ``jvm_topologies`` (build and submit the JVM benchmark topologies of ``topologies/jvm/``)."""
