#!/usr/bin/env python3
"""Local-cluster tool over the Nimbus client (:mod:`scheduler_py.nimbus`): readiness
polling, status, conf, kill — what ``deploy/*.sh`` and the tests use.

Command line (``python -m scheduler_py.devtools.stormctl`` with the project venv's python)::

    stormctl [--nimbus HOST:PORT] wait-cluster --supervisors 3 --timeout 120
    stormctl summary [--json]
    stormctl topology NAME [--json]
    stormctl wait-topology NAME --min-acked 100 [--workers 3] --timeout 180
    stormctl conf NAME [KEY]
    stormctl kill NAME [--wait-secs 0] [--timeout 60]

The Nimbus address defaults to $STORM_NIMBUS, then $STREAMPARSE_NIMBUS, then
127.0.0.1:6627. Exit status: 0 ok, 1 condition not reached before the timeout / error,
2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict

from scheduler_py.nimbus.client import NimbusCtl, TopologyState, default_nimbus, parse_hostport


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


def _no_topology(name: str) -> int:
    print(f"stormctl: no topology named {name}", file=sys.stderr)
    return 1


def cmd_topology(ctl: NimbusCtl, args) -> int:
    state = ctl.topology_state(args.name)
    if state is None:
        return _no_topology(args.name)
    if args.json:
        print(json.dumps(asdict(state), indent=2))
    else:
        _print_topology(state)
    return 0


def cmd_conf(ctl: NimbusCtl, args) -> int:
    conf = ctl.topology_conf(args.name)
    if conf is None:
        return _no_topology(args.name)
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
        _no_topology(args.name)
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
