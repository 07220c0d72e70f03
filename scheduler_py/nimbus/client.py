"""The Nimbus Thrift client: cluster and topology summaries, a topology's conf and
executors, and the activate / deactivate / rebalance / kill controls.

It speaks Storm's own protocol with thriftpy2 and our subset of Storm's IDL
(``scheduler_py/nimbus/nimbus.thrift``), so the brain needs neither streamparse nor a Storm
installation. Every call opens a fresh connection (Nimbus may restart under us). Given several seeds
(``nimbus.seeds``), each call goes to the leader Nimbus (:mod:`scheduler_py.nimbus.leader`).
:class:`NimbusCtl` implements :class:`~scheduler_py.scheduling.interfaces.TopologyControl`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import resources
from types import ModuleType

import thriftpy2

from scheduler_py.config import env
from scheduler_py.nimbus.leader import Address, LeaderAnswer, find_leader, seed_order
from scheduler_py.nimbus.supervisor_sync import sync_supervisor

log = logging.getLogger(__name__)

DEFAULT_NIMBUS = "127.0.0.1:6627"


@cache
def nimbus_idl() -> ModuleType:
    path = resources.files("scheduler_py.nimbus").joinpath("nimbus.thrift")
    with resources.as_file(path) as file:
        return thriftpy2.load(str(file), module_name="scheduler_nimbus_thrift")


def parse_hostport(text: str) -> tuple[str, int]:
    """``"host:port"`` → ``(host, port)``; a bare host gets Nimbus's port 6627."""
    host, _, port = text.rpartition(":")
    if not host:
        return text, 6627
    try:
        return host, int(port)
    except ValueError:
        raise ValueError(f"expected HOST:PORT for Nimbus, found {text!r}") from None


def default_nimbus() -> str:
    """``$SCHEDULER_PY_NIMBUS`` (or its deprecated aliases, :data:`scheduler_py.config.env.NIMBUS`),
    else 127.0.0.1:6627."""
    return env.NIMBUS.get() or DEFAULT_NIMBUS


ALL_TIME = ":all-time"


@dataclass
class SupervisorState:
    host: str
    supervisor_id: str
    slots: int
    used_slots: int
    uptime_secs: int
    version: str | None


@dataclass
class TopologyState:
    id: str
    name: str
    status: str
    num_workers: int
    num_executors: int
    uptime_secs: int
    sched_status: str | None = None
    # filled by topology_state()
    workers: list[str] = field(default_factory=list)  # "host:port", sorted
    placement: dict[str, list[str]] = field(default_factory=dict)  # component -> ["host:port", ...]
    acked: int = 0  # spout acks, all time
    failed: int = 0  # spout fails, all time
    emitted: int = 0  # all components, all time, non-system streams
    errors: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ExecutorRun:
    component: str
    task_start: int
    task_end: int
    host: str
    port: int
    emitted: int
    acked: int


class NimbusUnreachable(ConnectionError):
    """No connection to Nimbus (an ``OSError``, so the CLI reports it in one line)."""


class NimbusCtl:
    """A few Nimbus calls, each on a fresh connection (Nimbus may restart under us)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 6627,
        timeout_ms: int = 10000,
        seeds: Sequence[Address] = (),
    ):
        """One Nimbus at ``host:port``; or, with two or more ``seeds``, whichever of them
        leads at the time of each call (``host:port`` is then the first seed)."""
        if len(seeds) > 0:
            host, port = seeds[0]
        self.host, self.port, self.timeout_ms = host, port, timeout_ms
        self.seeds: tuple[Address, ...] = tuple(seeds)
        self._leader: Address | None = None

    @classmethod
    def of(cls, addresses: Sequence[Address], timeout_ms: int = 10000) -> NimbusCtl:
        """The client of one Nimbus, or of the leader among several seeds."""
        return cls(timeout_ms=timeout_ms, seeds=addresses)

    def address(self) -> Address:
        """Where the next call goes: the one Nimbus, or the leader the seeds name now."""
        if len(self.seeds) < 2:
            return self.host, self.port
        leader, notes = find_leader(seed_order(self.seeds, self._leader), self._ask_leader)
        if leader != self._leader:
            log.info("Nimbus leader: %s:%d%s", *leader, f" ({'; '.join(notes)})" if notes else "")
            self._leader = leader
        return leader

    def _ask_leader(self, seed: Address) -> LeaderAnswer:
        """Storm's ``Nimbus.getLeader`` on one seed."""
        client = self._client_at(seed)
        try:
            summary = client.getLeader()
        finally:
            client.close()
        if summary is None or not summary.host or not summary.port:
            return LeaderAnswer(None)
        return LeaderAnswer((summary.host, summary.port))

    def _client_at(self, address: Address):
        from thriftpy2.protocol import TBinaryProtocolFactory
        from thriftpy2.rpc import make_client
        from thriftpy2.transport import TFramedTransportFactory, TTransportException

        host, port = address
        try:
            return make_client(
                nimbus_idl().Nimbus,
                host=host,
                port=port,
                proto_factory=TBinaryProtocolFactory(),
                trans_factory=TFramedTransportFactory(),
                timeout=self.timeout_ms,
            )
        except TTransportException as error:
            raise NimbusUnreachable(
                f"cannot reach Nimbus at {host}:{port} ({error.message}); is it "
                "running there? Pass --nimbus HOST:PORT (storm.yaml's nimbus.seeds and "
                "nimbus.thrift.port)"
            ) from error

    def _client(self):
        return self._client_at(self.address())

    def _call(self, method: str, *args):
        client = self._client()
        try:
            return getattr(client, method)(*args)
        finally:
            client.close()

    # -- queries -------------------------------------------------------------------
    def cluster_summary(self) -> dict:
        cs = self._call("getClusterInfo")
        return {
            "nimbuses": [
                {
                    "host": n.host,
                    "port": n.port,
                    "leader": n.isLeader,
                    "version": n.version,
                    "uptime_secs": n.uptime_secs,
                }
                for n in (cs.nimbuses or [])
            ],
            "supervisors": [
                asdict(
                    SupervisorState(
                        s.host,
                        s.supervisor_id,
                        s.num_workers,
                        s.num_used_workers,
                        s.uptime_secs,
                        s.version,
                    )
                )
                for s in sorted(cs.supervisors or [], key=lambda s: s.host)
            ],
            "topologies": [
                asdict(
                    TopologyState(
                        t.id,
                        t.name,
                        t.status,
                        t.num_workers,
                        t.num_executors,
                        t.uptime_secs,
                        t.sched_status,
                    )
                )
                for t in (cs.topologies or [])
            ],
        }

    def find_topology_id(self, name: str) -> str | None:
        cs = self._call("getClusterInfo")
        for t in cs.topologies or []:
            if t.name == name or t.id == name:
                return t.id
        return None

    def topology_state(self, name: str) -> TopologyState | None:
        cs = self._call("getClusterInfo")
        summary = next((t for t in cs.topologies or [] if t.name == name or t.id == name), None)
        if summary is None:
            return None
        state = TopologyState(
            summary.id,
            summary.name,
            summary.status,
            summary.num_workers,
            summary.num_executors,
            summary.uptime_secs,
            summary.sched_status,
        )
        idl = nimbus_idl()
        info = self._call(
            "getTopologyInfoWithOpts",
            summary.id,
            idl.GetInfoOptions(num_err_choice=idl.NumErrorsChoice.ONE),
        )
        workers = set()
        for ex in info.executors or []:
            slot = f"{ex.host}:{ex.port}"
            workers.add(slot)
            comp = ex.component_id
            if not comp.startswith("__"):
                state.placement.setdefault(comp, []).append(slot)
            st = ex.stats
            if st is None:
                continue
            for stream, n in (st.emitted or {}).get(ALL_TIME, {}).items():
                if not stream.startswith("__"):
                    state.emitted += n
            spout = st.specific.spout if st.specific else None
            if spout is not None:
                state.acked += sum((spout.acked or {}).get(ALL_TIME, {}).values())
                state.failed += sum((spout.failed or {}).get(ALL_TIME, {}).values())
        state.workers = sorted(workers)
        state.placement = {c: sorted(s) for c, s in sorted(state.placement.items())}
        state.errors = {
            c: [e.error.splitlines()[0] for e in errs]
            for c, errs in (info.errors or {}).items()
            if errs
        }
        return state

    def executor_runs(self, name: str) -> list[ExecutorRun]:
        """Every executor of topology ``name`` (or id): where it runs and its all-time counts."""
        topo_id = self.find_topology_id(name)
        if topo_id is None:
            return []
        info = self._call("getTopologyInfo", topo_id)
        runs = []
        for ex in info.executors or []:
            emitted = acked = 0
            st = ex.stats
            if st is not None:
                emitted = sum(
                    n
                    for stream, n in (st.emitted or {}).get(ALL_TIME, {}).items()
                    if not stream.startswith("__")
                )
                spout = st.specific.spout if st.specific else None
                bolt = st.specific.bolt if st.specific else None
                if spout is not None:
                    acked = sum((spout.acked or {}).get(ALL_TIME, {}).values())
                elif bolt is not None:
                    acked = sum((bolt.acked or {}).get(ALL_TIME, {}).values())
            runs.append(
                ExecutorRun(
                    ex.component_id,
                    ex.executor_info.task_start,
                    ex.executor_info.task_end,
                    ex.host,
                    ex.port,
                    emitted,
                    acked,
                )
            )
        return sorted(runs, key=lambda r: (r.task_start, r.task_end))

    def supervisor_hosts(self) -> dict[str, str]:
        """supervisor id -> host."""
        cs = self._call("getClusterInfo")
        return {s.supervisor_id: s.host for s in cs.supervisors or []}

    def topology_conf(self, name: str) -> dict | None:
        """The topology's effective conf (as Nimbus stores it: cluster conf + submitted keys)."""
        topo_id = self.find_topology_id(name)
        if topo_id is None:
            return None
        return json.loads(self._call("getTopologyConf", topo_id))

    def status(self, name: str) -> str | None:
        """Nimbus's status of topology ``name`` (or id): ACTIVE, INACTIVE, REBALANCING,
        KILLED; ``None`` when it is not running."""
        cs = self._call("getClusterInfo")
        for t in cs.topologies or []:
            if t.name == name or t.id == name:
                return t.status
        return None

    def deactivate(self, name: str) -> None:
        """Spouts stop calling ``nextTuple`` (Storm's ``deactivate`` transition)."""
        self._call("deactivate", name)

    def activate(self, name: str) -> None:
        self._call("activate", name)

    def kill(self, name: str, wait_secs: int = 0) -> None:
        self._call("killTopologyWithOpts", name, nimbus_idl().KillOptions(wait_secs=wait_secs))

    def rebalance(self, name: str, wait_secs: int = 0, conf: dict | None = None) -> None:
        """Storm's ``rebalance`` transition with ``wait_secs`` (no parallelism change);
        ``conf`` entries are merged into the topology's conf (``topology_conf_overrides``)."""
        options = nimbus_idl().RebalanceOptions(wait_secs=wait_secs)
        if conf:
            options.topology_conf_overrides = json.dumps(conf)
        self._call("rebalance", name, options)

    def sync_supervisor(self, supervisor_id: str, host: str, port: int) -> None:
        """Forward Nimbus's assignments of ``supervisor_id`` to it now
        (:func:`~scheduler_py.nimbus.supervisor_sync.sync_supervisor`)."""
        nimbus_host, nimbus_port = self.address()
        sync_supervisor(
            nimbus_host, nimbus_port, supervisor_id, host, port, timeout_secs=self.timeout_ms / 1000
        )

    def assignment(self, name: str) -> frozenset[tuple[int, int, str, int]] | None:
        """Where Nimbus assigned each executor of topology ``name`` (or id), as
        ``(task_start, task_end, supervisor_id, port)``; ``None`` when the topology does not
        run or two supervisors share a host (executor summaries name the host only)."""
        by_host: dict[str, list[str]] = {}
        for supervisor, host in self.supervisor_hosts().items():
            by_host.setdefault(host, []).append(supervisor)
        if any(len(ids) > 1 for ids in by_host.values()):
            return None
        topo_id = self.find_topology_id(name)
        if topo_id is None:
            return None
        info = self._call("getTopologyInfo", topo_id)
        placed = set()
        for ex in info.executors or []:
            supervisor = by_host.get(ex.host)
            if supervisor is None:
                return None
            placed.add(
                (ex.executor_info.task_start, ex.executor_info.task_end, supervisor[0], ex.port)
            )
        return frozenset(placed)
