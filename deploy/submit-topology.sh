#!/usr/bin/env bash
# Build a streamparse project's jar and submit it to the local cluster with `sparse submit`.
#
#   deploy/submit-topology.sh <project> [name] [--wait[=N]] [sparse submit options...]
#
#   <project>   streamparse project directory, or a name under topologies/ (e.g. wordcount)
#   [name]      name to run the topology under (sparse -N); default: the definition's name
#   --wait[=N]  after submitting, wait until the topology is ACTIVE and its spouts have
#               N acked tuples (default 1); timeout SUBMIT_WAIT_TIMEOUT (default 180 s)
#   anything else goes to `sparse submit`, e.g.
#       -o scheduler.brain.algorithm=td -o topology.workers=2    (topology conf keys)
#       -f                                                      (kill a running one first)
#       -n <definition>                                         (topologies/<definition>.py)
#
# Nimbus: $STORM_NIMBUS, else the cluster.env of $CLUSTER_DIR (default build/cluster),
# else 127.0.0.1:6627; it reaches sparse as STREAMPARSE_NIMBUS (overrides config.json).
# The project's config.json env is used ("local" in topologies/wordcount).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPLOY="$REPO/deploy"
VENV="${VENV:-$REPO/.venv}"
CLUSTER_DIR="${CLUSTER_DIR:-$REPO/build/cluster}"
die() { echo "[submit-topology] ERROR: $*" >&2; exit 1; }
log() { echo "[submit-topology] $*"; }

[[ $# -ge 1 && "$1" != -* ]] || die "usage: $0 <project> [name] [--wait[=N]] [sparse submit options...]"
project="$1"; shift
if [[ ! -d "$project" && -d "$REPO/topologies/$project" ]]; then project="$REPO/topologies/$project"; fi
[[ -d "$project" ]] || die "no project directory '$project' (nor under $REPO/topologies/)"
project="$(cd "$project" && pwd)"

name=""
if [[ $# -ge 1 && "$1" != -* ]]; then name="$1"; shift; fi
wait_acked=""
sparse_args=()
for a in "$@"; do
  case "$a" in
    --wait) wait_acked=1 ;;
    --wait=*) wait_acked="${a#--wait=}" ;;
    *) sparse_args+=("$a") ;;
  esac
done

SPARSE="$VENV/bin/sparse"
[[ -x "$SPARSE" ]] || die "$SPARSE not found: create the venv (python3 -m venv $VENV && $VENV/bin/pip install -e '.[dev]')"

if [[ -z "${STORM_NIMBUS:-}" && -f "$CLUSTER_DIR/run/cluster.env" ]]; then
  STORM_NIMBUS="$(sed -n 's/^STORM_NIMBUS=//p' "$CLUSTER_DIR/run/cluster.env")"
fi
STORM_NIMBUS="${STORM_NIMBUS:-127.0.0.1:6627}"

jar="$("$DEPLOY/build-topology-jar.sh" "$project" | tail -n1)"

# The definition (topologies/<def>.py) decides the default name.
def_args=()
has_n=no
for a in "${sparse_args[@]}"; do [[ "$a" == -n || "$a" == --name || "$a" == --name=* ]] && has_n=yes; done
if [[ $has_n == no ]]; then
  mapfile -t defs < <(cd "$project" && ls topologies/*.py 2>/dev/null | xargs -r -n1 basename | sed 's/\.py$//')
  [[ ${#defs[@]} -ge 1 ]] || die "$project/topologies/ has no topology definition (*.py)"
  if [[ ${#defs[@]} -gt 1 ]]; then
    die "several definitions in $project/topologies/ (${defs[*]}): pass -n <definition>"
  fi
  def_args=(-n "${defs[0]}")
  definition="${defs[0]}"
else
  definition=""
fi
[[ -n "$name" ]] && def_args+=(-N "$name")
run_name="${name:-$definition}"

log "submitting $(basename "$project") as '${run_name:-?}' to nimbus $STORM_NIMBUS (jar $jar)"
(
  cd "$project"
  # sparse imports fabric/paramiko, which warn about deprecated ciphers; pkg_resources too.
  export PYTHONWARNINGS="${PYTHONWARNINGS:-ignore}"
  # sparse refuses to run as root unless LEIN_ROOT is set (it guards Leiningen, which
  # --local_jar_path never runs)
  export LEIN_ROOT="${LEIN_ROOT:-1}"
  STREAMPARSE_NIMBUS="$STORM_NIMBUS" "$SPARSE" submit --local_jar_path "$jar" \
    "${def_args[@]}" "${sparse_args[@]}"
)

if [[ -n "$wait_acked" ]]; then
  [[ -n "$run_name" ]] || die "--wait needs the topology name (pass [name])"
  py="$VENV/bin/python"
  "$py" -m scheduler_py.devtools.stormctl --nimbus "$STORM_NIMBUS" wait-topology "$run_name" \
    --min-acked "$wait_acked" --timeout "${SUBMIT_WAIT_TIMEOUT:-180}"
fi
