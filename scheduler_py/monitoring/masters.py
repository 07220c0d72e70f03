"""Where a Spark master runs, as far as the aggregation's driver needs to know
(:func:`scheduler_py.monitoring.aggregate.spark_session`)."""

from __future__ import annotations

import ipaddress


def master_on_loopback(master: str) -> bool:
    """Whether every host of a standalone master URL is a loopback address, e.g.
    ``spark://127.0.0.1:7077`` (``deploy/spark-up.sh``) or
    ``spark://localhost:7077,127.0.0.2:7077``; then its executors run on this machine and
    reach the driver on loopback too.  ``local[*]`` and other schemes: ``False``."""
    if not master.startswith("spark://"):
        return False
    for host_port in master.removeprefix("spark://").split(","):
        host = host_port.rpartition(":")[0].strip("[]")
        if host == "localhost":
            continue
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return False
        except ValueError:  # a host name other than localhost
            return False
    return True
