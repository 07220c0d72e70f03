"""Tell a supervisor its assignments now, instead of at its own 10 s timer.

A Storm supervisor learns what to run in two ways (storm-server ``Supervisor.launch`` and
``Nimbus.mkAssignments``): Nimbus pushes ``SupervisorAssignments`` to the supervisors whose
assignment changed in a scheduling round, and every supervisor pulls its own
(``Nimbus.getSupervisorAssignments``) when its ``SynchronizeAssignments`` timer fires, every
10 s (hard-coded). On a ``rebalance`` Nimbus leaves the rebalanced topology out of the
existing assignments, so it pushes only to the supervisors *in* the new assignment; one that
loses all of the topology's workers keeps running them until its timer fires.

:func:`sync_supervisor` does, at once, exactly what that timer does: it asks Nimbus for the
supervisor's assignments and hands them to the supervisor's Thrift service
(``Supervisor.sendSupervisorAssignments``, the call Nimbus itself uses to push), which queues
the same ``SynchronizeAssignments`` the timer would. The bytes pass through unchanged
(:mod:`scheduler_py.nimbus.raw_thrift` says why they are not decoded). On a cluster with
Thrift authentication (SASL/Kerberos transports) this plain call is refused; the supervisor
then syncs at its timer as before.
"""

from __future__ import annotations

from scheduler_py.nimbus.raw_thrift import (
    STRUCT,
    Field,
    ThriftCallError,
    call,
    exception_text,
    string_field,
)


class SupervisorSyncError(RuntimeError):
    """The assignments could not be forwarded; the message says which step failed."""


def fetch_assignments(
    nimbus_host: str, nimbus_port: int, supervisor_id: str, timeout_secs: float
) -> bytes | None:
    """Nimbus's ``SupervisorAssignments`` for ``supervisor_id`` as encoded struct bytes;
    ``None`` when Nimbus returned nothing (it is not the leader, or is still recovering)."""
    result = call(
        nimbus_host,
        nimbus_port,
        "getSupervisorAssignments",
        [string_field(1, supervisor_id)],
        timeout_secs,
    )
    _raise_declared(result, "Nimbus getSupervisorAssignments")
    success = result.get(0)
    if success is None:
        return None
    if success.type != STRUCT:
        raise SupervisorSyncError(
            f"expected a SupervisorAssignments struct from Nimbus, found Thrift type {success.type}"
        )
    return success.value


def send_assignments(host: str, port: int, assignments: bytes, timeout_secs: float) -> None:
    """``Supervisor.sendSupervisorAssignments`` with already-encoded assignments."""
    result = call(
        host, port, "sendSupervisorAssignments", [Field(1, STRUCT, assignments)], timeout_secs
    )
    _raise_declared(result, f"supervisor {host}:{port} sendSupervisorAssignments")


def sync_supervisor(
    nimbus_host: str,
    nimbus_port: int,
    supervisor_id: str,
    host: str,
    port: int,
    timeout_secs: float = 5.0,
) -> None:
    """Forward Nimbus's current assignments of ``supervisor_id`` to it at ``host:port``.
    Raises :class:`SupervisorSyncError` (or ``OSError`` for the network) when it did not."""
    try:
        assignments = fetch_assignments(nimbus_host, nimbus_port, supervisor_id, timeout_secs)
    except (OSError, ValueError, ThriftCallError) as error:
        raise SupervisorSyncError(
            f"could not read supervisor {supervisor_id}'s assignments from Nimbus at "
            f"{nimbus_host}:{nimbus_port}: {error}"
        ) from error
    if assignments is None:
        raise SupervisorSyncError(
            f"Nimbus at {nimbus_host}:{nimbus_port} returned no assignments for supervisor "
            f"{supervisor_id} (not the leader, or still recovering its assignments)"
        )
    try:
        send_assignments(host, port, assignments, timeout_secs)
    except (OSError, ValueError, ThriftCallError) as error:
        raise SupervisorSyncError(
            f"could not hand supervisor {supervisor_id} at {host}:{port} its assignments "
            f"(supervisor.thrift.port): {error}"
        ) from error


def _raise_declared(result: dict[int, Field], what: str) -> None:
    for field_id, field in result.items():
        if field_id != 0:
            raise ThriftCallError(f"{what} refused: {exception_text(field)}")
