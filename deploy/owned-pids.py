"""The processes a local cluster started, as pids on one line (``owned_pids`` of
deploy/process-common.sh; cluster-down.sh and spark-down.sh stop them).

    owned-pids.py DIR "GROUPS" [--arg-prefix P]... [--option-under OPT]... [--cwd-under SUB]...

A process is ours if
  - it carries one of our markers: an argument starting with a ``--arg-prefix`` (``{dir}``
    stands for DIR), an ``--option-under`` option followed by a path under DIR, or a working
    directory under DIR/SUB (``--cwd-under``); or
  - it is in one of GROUPS (the process groups of the daemons we started: pid files) and its
    command line or working directory points into DIR (guards against recycled ids).
This process and its parent (the calling shell) are never listed.
"""

from __future__ import annotations

import argparse
import itertools
import os


def owned(
    directory: str,
    groups: set[int],
    prefixes: list[str],
    options: list[str],
    cwd_subdirs: list[str],
) -> list[str]:
    root = os.path.realpath(directory).rstrip("/")
    prefixes = [p.replace("{dir}", root) for p in prefixes]
    cwd_prefixes = [f"{root}/{sub.strip('/')}/" for sub in cwd_subdirs]
    me = {os.getpid(), os.getppid()}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in me:
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                args = [a.decode(errors="replace") for a in handle.read().split(b"\0") if a]
            cwd = os.readlink(f"/proc/{name}/cwd")
            group = os.getpgid(int(name))
        except (OSError, ProcessLookupError):
            continue
        if not args:  # a kernel thread or a zombie
            continue
        marked = (
            any(a.startswith(tuple(prefixes)) for a in args)
            or any(a in options and b.startswith(root + "/") for a, b in itertools.pairwise(args))
            or any(cwd.startswith(p) for p in cwd_prefixes)
        )
        inside = cwd == root or cwd.startswith(root + "/") or any(root + "/" in a for a in args)
        if marked or (group in groups and inside):
            found.append(name)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("groups", help="process group ids, separated by spaces")
    parser.add_argument("--arg-prefix", action="append", default=[])
    parser.add_argument("--option-under", action="append", default=[])
    parser.add_argument("--cwd-under", action="append", default=[])
    args = parser.parse_args()
    groups = {int(g) for g in args.groups.split() if g.isdigit()}
    print(
        " ".join(owned(args.directory, groups, args.arg_prefix, args.option_under, args.cwd_under))
    )


if __name__ == "__main__":
    main()
