"""Where a Spark master runs, as far as the aggregation's driver needs to know
(:func:`scheduler_py.monitoring.spark.spark_session`)."""

from __future__ import annotations

import ipaddress
import socket

DEFAULT_PORT = 7077


def master_on_loopback(master: str) -> bool:
    """Whether every host of a standalone master URL is a loopback address, e.g.
    ``spark://127.0.0.1:7077`` (``deploy/spark-up.sh``) or
    ``spark://localhost:7077,127.0.0.2:7077``; then its executors run on this machine and
    reach the driver on loopback too.  ``local[*]`` and other schemes: ``False``."""
    if not master.startswith("spark://"):
        return False
    for host, _ in master_addresses(master):
        if host == "localhost":
            continue
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return False
        except ValueError:  # a host name other than localhost
            return False
    return True


def master_addresses(master: str) -> list[tuple[str, int]]:
    """``(host, port)`` of every master of a ``spark://`` URL (several for a standby
    setup); nothing for ``local[*]`` and other schemes."""
    if not master.startswith("spark://"):
        return []
    addresses = []
    for host_port in master.removeprefix("spark://").split(","):
        host, colon, port = host_port.rpartition(":")
        if not colon or not port.isdigit():
            host, port = host_port, str(DEFAULT_PORT)
        addresses.append((host.strip("[]"), int(port)))
    return addresses


def unreachable_master(master: str, timeout: float = 3.0) -> str | None:
    """Why no master of a ``spark://`` URL accepts a connection, or ``None`` when one does
    (or the URL names no standalone master).  Spark itself would retry for about a minute
    and then fail with a stopped SparkContext."""
    failures = []
    for host, port in master_addresses(master):
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            return None
        except OSError as error:
            failures.append(f"{host}:{port}: {error.strerror or error}")
    if not failures:
        return None
    return (
        f"Spark master {master} unreachable ({'; '.join(failures)}); start it "
        "(make spark-up for one on loopback) or pass another --master"
    )
