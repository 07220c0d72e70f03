#!/usr/bin/env bash
# The Python release artifacts, into OUTDIR (deploy/dist.sh, `make dist`, gives dist/):
#   scheduler_py-VERSION-py3-none-any.whl, scheduler_py-VERSION.tar.gz    the runtime (the brain:
#       serve, plan, aggregate, dashboard, the operator commands); no benchmarks, no devtools
#   scheduler_py_bench-VERSION-py3-none-any.whl, scheduler_py_bench-VERSION.tar.gz    the
#       benchmarks and the local-cluster tooling (deploy/bench_dist.py stages them), which
#       require scheduler-py[bench]==VERSION
# Each wheel is built from its sdist (python -m build without --sdist/--wheel), so an sdist that
# misses a file fails the build. PYTHON_BUILD_ARGS goes to every `python -m build`
# (tests/test_release.py passes --no-isolation: the venv's setuptools, no package index).
# Usage: deploy/dist-python.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-${VENV:-.venv}/bin/python}"
die() { echo "dist-python.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: deploy/dist-python.sh OUTDIR"
out="$1"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
read -r -a build_args <<< "${PYTHON_BUILD_ARGS:-}"

stage="$(mktemp -d "${TMPDIR:-/tmp}/scheduler-py-dist.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
# the runtime from a copy of its sources: a scheduler_py.egg-info left in the work tree (an
# editable install's) lists the benchmarks, and setuptools would put what it lists in the sdist
# and, as package data, in the wheel
mkdir "$stage/runtime"
cp pyproject.toml README.md LICENSE "$stage/runtime/"
tar -C . --exclude=__pycache__ --exclude='*.pyc' --exclude='*.egg-info' -cf - scheduler_py \
  | tar -C "$stage/runtime" -xf -
"$PY" -m build "${build_args[@]}" --outdir "$out" "$stage/runtime" >"$stage/runtime.log" 2>&1 \
  || { tail -30 "$stage/runtime.log" >&2; die "python -m build of the runtime failed"; }
"$PY" deploy/bench_dist.py "$stage/project" >/dev/null
"$PY" -m build "${build_args[@]}" --outdir "$out" "$stage/project" >"$stage/bench.log" 2>&1 \
  || { tail -30 "$stage/bench.log" >&2; die "python -m build of scheduler-py-bench failed"; }
"$PY" deploy/bench_dist.py --check "$out" || die "the wheels in $out are not what a release ships"
