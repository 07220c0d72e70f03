#!/usr/bin/env python3
"""Tiny Nimbus Thrift helper for the local test cluster (readiness polling, status, kill).

It talks to Nimbus with thriftpy2 and the storm.thrift that streamparse bundles
(``streamparse.thrift``): the structs it reads (ClusterSummary, TopologyInfo, ...)
are wire-compatible with Storm 2.8 (Storm only added optional fields since).

Command line (run it with the project venv's python)::

    stormctl.py [--nimbus HOST:PORT] wait-cluster --supervisors 3 --timeout 120
    stormctl.py summary [--json]
    stormctl.py topology NAME [--json]
    stormctl.py wait-topology NAME --min-acked 100 [--workers 3] --timeout 180
    stormctl.py conf NAME [KEY]
    stormctl.py kill NAME [--wait-secs 0] [--timeout 60]

The Nimbus address defaults to $STORM_NIMBUS, then $STREAMPARSE_NIMBUS, then
127.0.0.1:6627.  As a module: ``NimbusCtl("127.0.0.1", 6627).cluster_summary()``.
Exit status: 0 ok, 1 condition not reached before the timeout / error, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field

ALL_TIME = ":all-time"


def _nimbus_service():
    # streamparse imports fabric/paramiko, which warn about deprecated ciphers.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from streamparse.thrift import (
                GetInfoOptions,
                KillOptions,
                Nimbus,
                NumErrorsChoice,
            )
        except ImportError as exc:  # pragma: no cover - environment problem
            sys.exit(
                f"stormctl: cannot import streamparse.thrift ({exc}).\n"
                "  Use the project venv (VENV=.venv): python3 -m venv .venv && "
                ".venv/bin/pip install -e '.[dev]'\n"
                "  (or just: .venv/bin/pip install streamparse thriftpy2)"
            )
    return Nimbus, KillOptions, GetInfoOptions, NumErrorsChoice


def parse_hostport(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host:
        return text, 6627
    return host, int(port)


def default_nimbus() -> str:
    env = os.environ
    return env.get("STORM_NIMBUS") or env.get("STREAMPARSE_NIMBUS") or "127.0.0.1:6627"


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


class NimbusCtl:
    """A few Nimbus calls, each on a fresh connection (Nimbus may restart under us)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 6627, timeout_ms: int = 10000):
        self.host, self.port, self.timeout_ms = host, port, timeout_ms
        self._svc = _nimbus_service()

    def _client(self):
        from thriftpy2.protocol import TBinaryProtocolFactory
        from thriftpy2.rpc import make_client
        from thriftpy2.transport import TFramedTransportFactory

        return make_client(
            self._svc[0],
            host=self.host,
            port=self.port,
            proto_factory=TBinaryProtocolFactory(),
            trans_factory=TFramedTransportFactory(),
            timeout=self.timeout_ms,
        )

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
        _, _, GetInfoOptions, NumErrorsChoice = self._svc
        info = self._call(
            "getTopologyInfoWithOpts",
            summary.id,
            GetInfoOptions(num_err_choice=NumErrorsChoice.ONE),
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
        _, KillOptions, _, _ = self._svc
        self._call("killTopologyWithOpts", name, KillOptions(wait_secs=wait_secs))


# -- command line ----------------------------------------------------------------------
def _poll(timeout: float, interval: float, fn, describe):
    """Call fn() until it returns a truthy value or the timeout expires."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            result = fn()
            if result:
                return result
            last = describe()
        except Exception as exc:
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            print(f"stormctl: timed out after {timeout:.0f}s; last state: {last}", file=sys.stderr)
            return None
        time.sleep(interval)


def cmd_wait_cluster(ctl: NimbusCtl, args) -> int:
    seen = {}

    def ready():
        cs = ctl.cluster_summary()
        seen["cs"] = cs
        leader = any(n["leader"] for n in cs["nimbuses"])
        return leader and len(cs["supervisors"]) >= args.supervisors

    def describe():
        cs = seen.get("cs")
        if not cs:
            return "no answer from Nimbus"
        return (
            f"leader={any(n['leader'] for n in cs['nimbuses'])} "
            f"supervisors={[s['host'] for s in cs['supervisors']]}"
        )

    if _poll(args.timeout, args.interval, ready, describe) is None:
        return 1
    cs = seen["cs"]
    print(
        f"nimbus {ctl.host}:{ctl.port} leader, supervisors: "
        + ", ".join(f"{s['host']}({s['slots']} slots)" for s in cs["supervisors"])
    )
    return 0


def cmd_summary(ctl: NimbusCtl, args) -> int:
    cs = ctl.cluster_summary()
    if args.json:
        print(json.dumps(cs, indent=2))
        return 0
    for n in cs["nimbuses"]:
        print(
            f"nimbus     {n['host']}:{n['port']}  leader={n['leader']}  version={n['version']}"
            f"  uptime={n['uptime_secs']}s"
        )
    for s in cs["supervisors"]:
        print(
            f"supervisor {s['host']:<12} slots {s['used_slots']}/{s['slots']} used"
            f"  uptime={s['uptime_secs']}s  id={s['supervisor_id']}"
        )
    if not cs["topologies"]:
        print("topologies (none)")
    for t in cs["topologies"]:
        print(
            f"topology   {t['name']:<16} {t['status']:<10} workers={t['num_workers']}"
            f" executors={t['num_executors']} uptime={t['uptime_secs']}s id={t['id']}"
        )
    return 0


def _print_topology(state: TopologyState) -> None:
    print(
        f"{state.name} ({state.id}): {state.status}, uptime {state.uptime_secs}s, "
        f"acked={state.acked} failed={state.failed} emitted={state.emitted}"
    )
    print(f"  workers ({len(state.workers)}): {' '.join(state.workers)}")
    for comp, slots in state.placement.items():
        print(f"  {comp:<10} {' '.join(slots)}")
    for comp, errs in state.errors.items():
        print(f"  ERROR {comp}: {errs[0]}")


def cmd_topology(ctl: NimbusCtl, args) -> int:
    state = ctl.topology_state(args.name)
    if state is None:
        print(f"stormctl: no topology named {args.name}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(asdict(state), indent=2))
    else:
        _print_topology(state)
    return 0


def cmd_conf(ctl: NimbusCtl, args) -> int:
    conf = ctl.topology_conf(args.name)
    if conf is None:
        print(f"stormctl: no topology named {args.name}", file=sys.stderr)
        return 1
    if args.key:
        if args.key not in conf:
            print(f"stormctl: {args.key} not set for {args.name}", file=sys.stderr)
            return 1
        print(json.dumps(conf[args.key]))
    else:
        print(json.dumps(conf, indent=2, sort_keys=True))
    return 0


def cmd_wait_topology(ctl: NimbusCtl, args) -> int:
    seen: dict = {}

    def ready():
        st = ctl.topology_state(args.name)
        seen["st"] = st
        return (
            st is not None
            and st.status == "ACTIVE"
            and st.acked >= args.min_acked
            and (args.workers is None or len(st.workers) >= args.workers)
        )

    def describe():
        st = seen.get("st")
        if st is None:
            return f"topology {args.name} not found"
        return (
            f"status={st.status} workers={len(st.workers)} acked={st.acked} "
            f"failed={st.failed} errors={st.errors}"
        )

    start = time.monotonic()
    if _poll(args.timeout, args.interval, ready, describe) is None:
        return 1
    st = seen["st"]
    if args.json:
        print(
            json.dumps(asdict(st) | {"waited_secs": round(time.monotonic() - start, 1)}, indent=2)
        )
    else:
        print(f"reached after {time.monotonic() - start:.1f}s:")
        _print_topology(st)
    return 0


def cmd_kill(ctl: NimbusCtl, args) -> int:
    if ctl.find_topology_id(args.name) is None:
        print(f"stormctl: no topology named {args.name}", file=sys.stderr)
        return 0 if args.missing_ok else 1
    ctl.kill(args.name, args.wait_secs)
    if (
        _poll(
            args.timeout,
            args.interval,
            lambda: ctl.find_topology_id(args.name) is None,
            lambda: f"{args.name} still listed",
        )
        is None
    ):
        return 1
    print(f"killed {args.name}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nimbus", default=default_nimbus(), help="HOST:PORT (default %(default)s)")
    p.add_argument("--interval", type=float, default=1.0, help="poll interval, seconds")
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("wait-cluster", help="wait for a Nimbus leader and N supervisors")
    s.add_argument("--supervisors", type=int, default=1)
    s.add_argument("--timeout", type=float, default=120)
    s.set_defaults(fn=cmd_wait_cluster)

    s = sub.add_parser("summary", help="nimbus, supervisors, topologies")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_summary)

    s = sub.add_parser("topology", help="status, workers, placement and acked count of a topology")
    s.add_argument("name")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_topology)

    s = sub.add_parser("conf", help="a topology's conf (JSON), or one key of it")
    s.add_argument("name")
    s.add_argument("key", nargs="?")
    s.set_defaults(fn=cmd_conf)

    s = sub.add_parser("wait-topology", help="wait until ACTIVE with at least N acked spout tuples")
    s.add_argument("name")
    s.add_argument("--min-acked", type=int, default=1)
    s.add_argument("--workers", type=int, default=None, help="also wait for this many workers")
    s.add_argument("--timeout", type=float, default=180)
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_wait_topology)

    s = sub.add_parser("kill", help="kill a topology and wait until Nimbus no longer lists it")
    s.add_argument("name")
    s.add_argument("--wait-secs", type=int, default=0, help="KillOptions.wait_secs")
    s.add_argument("--timeout", type=float, default=60)
    s.add_argument("--missing-ok", action="store_true")
    s.set_defaults(fn=cmd_kill)

    args = p.parse_args(argv)
    host, port = parse_hostport(args.nimbus)
    try:
        return args.fn(NimbusCtl(host, port), args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        print(f"stormctl: {type(exc).__name__}: {exc} (nimbus {host}:{port})", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
