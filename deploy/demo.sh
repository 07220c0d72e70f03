#!/usr/bin/env bash
# `make demo`: start the local cluster (ZooKeeper, Nimbus, 3 supervisors, the brain),
# submit the streamparse word count, wait until tuples are acked, then print where every
# executor runs according to Nimbus next to what the brain planned.
#
# DEMO_ALGORITHM (default td) and DEMO_BALANCE_ALPHA (default 1.2: paper 000's
# load-balancing capacity mode, so word count spreads over the three supervisors by
# traffic instead of being consolidated into one worker) choose the placement.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPLOY="$REPO/deploy"
VENV="${VENV:-$REPO/.venv}"
CLUSTER_DIR="${CLUSTER_DIR:-$REPO/build/cluster}"
ALGORITHM="${DEMO_ALGORITHM:-td}"
ALPHA="${DEMO_BALANCE_ALPHA:-1.2}"
export VENV CLUSTER_DIR

echo "== starting the local cluster"
"$DEPLOY/cluster-up.sh"
nimbus="$(sed -n 's/^STORM_NIMBUS=//p' "$CLUSTER_DIR/run/cluster.env")"

echo "== submitting word count (algorithm $ALGORITHM, balance alpha $ALPHA)"
"$DEPLOY/submit-topology.sh" wordcount wordcount -f --wait=100 \
  -o "scheduler.brain.algorithm=$ALGORITHM" -o "scheduler.brain.balance.alpha=$ALPHA"

echo "== letting it run for ${DEMO_RUN_SECS:-20}s"
sleep "${DEMO_RUN_SECS:-20}"
echo
"$VENV/bin/scheduler-py" placement wordcount --nimbus "$nimbus" \
  --plan-log "$CLUSTER_DIR/logs/brain-plans.jsonl"
echo
if [[ "$(sed -n 's/^AGGREGATE_STARTED=//p' "$CLUSTER_DIR/run/cluster.env")" == yes ]]; then
  zk="$(sed -n 's/^STORM_ZK_HOST=//p' "$CLUSTER_DIR/run/cluster.env"):$(sed -n 's/^STORM_ZK_PORT=//p' "$CLUSTER_DIR/run/cluster.env")"
  echo "== measured by the worker monitor, aggregated by PySpark (waiting for a minute of data)"
  "$VENV/bin/scheduler-py" metrics wordcount --nimbus "$nimbus" --zookeeper "$zk" \
    --wait "${DEMO_METRICS_WAIT_SECS:-180}" --min-windows 5
  echo
fi
echo "The cluster keeps running: 'deploy/cluster-status.sh' shows it, 'make cluster-down' stops it."
