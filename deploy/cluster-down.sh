#!/usr/bin/env bash
# Stop the local Storm test cluster started by cluster-up.sh, leaving no process behind.
#
#   deploy/cluster-down.sh                 # the cluster in $CLUSTER_DIR (default build/cluster)
#   CLUSTER_DIR=/tmp/c2 deploy/cluster-down.sh
#   deploy/cluster-down.sh --purge         # also delete $CLUSTER_DIR (conf, data, logs)
#
# 1. SIGTERM to the process group of every daemon with a pid file (a supervisor's group
#    holds its workers, their LogWriters and their multilang Python subprocesses);
#    supervisors first, ZooKeeper last.
# 2. wait up to CLUSTER_STOP_TIMEOUT seconds (default 15), then SIGKILL what is left.
# 3. sweep: any process whose command line or working directory is under $CLUSTER_DIR
#    (e.g. a worker whose supervisor was killed -9 earlier) gets the same treatment.
# 4. emulated hosts (EMU_HOSTS): deploy/emulated-hosts.sh down removes every network
#    namespace, link, bridge, qdisc and cgroup named after this cluster's prefix.
# Exit status 0 when nothing of the cluster is left running.
set -euo pipefail
CLUSTER_SCRIPT=cluster-down
# shellcheck source=deploy/cluster-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster-common.sh"

PURGE=no
for a in "$@"; do
  case "$a" in
    --purge) PURGE=yes ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) cdie "unknown argument $a (try --help)" ;;
  esac
done
STOP_TIMEOUT="${CLUSTER_STOP_TIMEOUT:-15}"

if [[ ! -d "$CLUSTER_DIR" ]]; then
  clog "no cluster directory $CLUSTER_DIR: nothing to stop"
  exit 0
fi

# Stop order: supervisors (and their workers) before nimbus, zookeeper last.
order=()
for c in $(cluster_components); do [[ $c == supervisor-* ]] && order+=("$c"); done
order+=(dashboard aggregate ui nimbus brain zookeeper)

groups=()
for c in "${order[@]}"; do
  if pid="$(component_pid "$c")"; then term_group clog "$c" "$pid"; groups+=("$pid"); fi
done

# Stragglers not in those groups (e.g. orphaned workers) too; SIGKILL after STOP_TIMEOUT.
stop_owned clog "$STOP_TIMEOUT" cluster_pids "${groups[@]}"

rm -f "$RUN_DIR"/*.pid "$RUN_DIR/cluster.env"
# the aggregation's CPU cgroup (scheduler_py/monitoring/priority.py); refused, and kept, while
# another cluster's aggregation still runs in it
for group in /sys/fs/cgroup/cpu/scheduler-py-aggregate /sys/fs/cgroup/scheduler-py-aggregate; do
  [[ -d $group ]] && rmdir "$group" 2>/dev/null || true
done
if any_left clog cluster_pids "the cluster"; then
  exit 1
fi
# emulated hosts (EMU_HOSTS): every namespace, link, bridge and cgroup named $EMU_PREFIX-*,
# also after a crash that lost the state file
if ((EUID == 0)) && command -v ip >/dev/null; then
  CLUSTER_DIR="$CLUSTER_DIR" CLUSTER_PORT_OFFSET="$CLUSTER_PORT_OFFSET" "$DEPLOY/emulated-hosts.sh" down || exit 1
fi
if [[ $PURGE == yes ]]; then
  rm -rf "$CLUSTER_DIR"
  clog "cluster stopped; $CLUSTER_DIR deleted"
else
  clog "cluster stopped (logs kept in $LOG_DIR)"
fi
