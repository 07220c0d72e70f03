#!/usr/bin/env bash
# `make demo`: start the local cluster (ZooKeeper, Nimbus, 3 supervisors, the brain with its
# reconfiguration controller, the worker monitor and the PySpark aggregation), submit the
# streamparse word count, show where every executor runs next to what the brain planned and
# what the monitor measured — then change the load and watch the brain re-plan it:
#
#   1. word count runs with expensive split bolts (DEMO_HEAVY_CPU_MS of CPU per sentence),
#      placed round-robin over the three supervisors (algorithm DEMO_ALGORITHM, default
#      `even`, i.e. what Storm's default scheduler does), each supervisor capped at
#      DEMO_NODE_CAP % CPU for it;
#   2. the split bolts become cheap (a control file the topology re-reads every second);
#   3. the change trigger fires, the controller drains the topology, Nimbus applies the
#      brain's `tdls` plan (everything in one worker now that it fits), the topology resumes;
#      the history and the measured inter-worker traffic before/after are printed.
#
# The demo's story is the load change, so the one-off re-plan on the first measurements
# (scheduler.reconfig.replan.on.measured) is off for it.
#
# DEMO_RECONFIGURE=no stops after step 1.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPLOY="$REPO/deploy"
VENV="${VENV:-$REPO/.venv}"
CLUSTER_DIR="${CLUSTER_DIR:-$REPO/build/cluster}"
ALGORITHM="${DEMO_ALGORITHM:-even}"
NODE_CAP="${DEMO_NODE_CAP:-60}"
HEAVY_CPU_MS="${DEMO_HEAVY_CPU_MS:-80}"
INTERVAL_MS="${DEMO_SPOUT_INTERVAL_MS:-200}"
RECONFIGURE="${DEMO_RECONFIGURE:-yes}"
# aggregate often enough for the demo to see the load change within a minute
export AGGREGATE_EVERY="${AGGREGATE_EVERY:-10s}" AGGREGATE_WINDOW="${AGGREGATE_WINDOW:-30s}"
export VENV CLUSTER_DIR
SPY="$VENV/bin/scheduler-py"

echo "== starting the local cluster"
"$DEPLOY/cluster-up.sh"
env_of() { sed -n "s/^$1=//p" "$CLUSTER_DIR/run/cluster.env"; }
nimbus="$(env_of STORM_NIMBUS)"
zk="$(env_of STORM_ZK_HOST):$(env_of STORM_ZK_PORT)"
export SCHEDULER_PY_BRAIN="$(env_of BRAIN_HOST):$(env_of BRAIN_PORT)"
control="$CLUSTER_DIR/data/demo-control.json"
mkdir -p "$(dirname "$control")"
printf '{"interval_ms": %s, "split_cpu_ms": %s}\n' "$INTERVAL_MS" "$HEAVY_CPU_MS" >"$control"

echo "== submitting word count: split bolts burn ${HEAVY_CPU_MS} ms CPU per sentence;" \
  "placed by $ALGORITHM, re-planned by tdls, ${NODE_CAP}% CPU per supervisor"
"$DEPLOY/submit-topology.sh" wordcount wordcount -f --wait=20 \
  -o "scheduler.brain.algorithm=$ALGORITHM" \
  -o "scheduler.brain.node.cpu.cap=$NODE_CAP" \
  -o "topology.component.cpu.pcore.percent=5" \
  -o "topology.disable.loadaware.messaging=true" \
  -o "topology.max.spout.pending=50" \
  -o "scheduler.reconfig.change.threshold=0.2" \
  -o "scheduler.reconfig.change.windows=3" \
  -o "scheduler.reconfig.warmup.secs=30" \
  -o "scheduler.reconfig.replan.on.measured=false" \
  -o "wordcount.control.file=$control"

echo "== letting it run for ${DEMO_RUN_SECS:-20}s"
sleep "${DEMO_RUN_SECS:-20}"
echo
"$SPY" placement wordcount --nimbus "$nimbus" --plan-log "$CLUSTER_DIR/logs/brain-plans.jsonl"
echo
if [[ "$(env_of AGGREGATE_STARTED)" != yes ]]; then
  echo "(the worker monitor or the aggregation is off: no measurements, no reconfiguration)"
  echo "The cluster keeps running: 'deploy/cluster-status.sh' shows it, 'make cluster-down' stops it."
  exit 0
fi
echo "== measured by the worker monitor, aggregated by PySpark (waiting for 30 s of data)"
# an aggregate computed after those 30 s (metrics says so plainly if the aggregation is behind)
"$SPY" metrics wordcount --nimbus "$nimbus" --zookeeper "$zk" \
  --wait "${DEMO_METRICS_WAIT_SECS:-180}" --min-windows 3 \
  --computed-after-ms "$(($(date +%s%3N) + 30000))"
echo

if [[ "$RECONFIGURE" == yes ]]; then
  echo "== the load drops: the split bolts stop burning CPU"
  sleep "${DEMO_STEADY_SECS:-30}"
  printf '{"interval_ms": %s, "split_cpu_ms": 0}\n' "$INTERVAL_MS" >"$control.tmp"
  mv "$control.tmp" "$control"
  echo "== waiting for the brain's trigger, drain-out and re-assignment (scheduler-py history wordcount)"
  deadline=$((SECONDS + ${DEMO_RECONFIG_WAIT_SECS:-360}))
  state=""
  while ((SECONDS < deadline)); do
    state="$("$SPY" history wordcount --json 2>/dev/null | "$VENV/bin/python" -c '
import json, sys
entries = [e for e in json.load(sys.stdin) if e.get("state") != "declined"]
print(entries[-1]["state"] if entries else "")' || true)"
    [[ "$state" == completed || "$state" == rolled_back || "$state" == failed ]] && break
    sleep 5
  done
  "$SPY" history wordcount
  echo
  if [[ "$state" == completed ]]; then
    "$SPY" placement wordcount --nimbus "$nimbus" --plan-log "$CLUSTER_DIR/logs/brain-plans.jsonl"
    echo
    echo "== measured after the reconfiguration (an aggregate whose window starts after the resume)"
    resumed_ms="$("$SPY" history wordcount --json | "$VENV/bin/python" -c '
import json, sys
done = [e for e in json.load(sys.stdin) if e.get("state") == "completed"]
print(int(done[-1]["resumed_at"] * 1000))')"
    "$SPY" metrics wordcount --nimbus "$nimbus" --zookeeper "$zk" \
      --wait "${DEMO_AFTER_SECS:-120}" --window-after-ms "$resumed_ms" |
      sed -n '/NOTE\|inter-worker/p'
    echo
    echo "== the reconfiguration line: pause and measured gain (the brain records it from that aggregate)"
    deadline=$((SECONDS + 60))
    until "$SPY" history wordcount | grep -q "measured inter-worker" || ((SECONDS > deadline)); do
      sleep 3
    done
    "$SPY" history wordcount | sed -n '/completed/,/measured inter-worker/p'
  else
    echo "no completed reconfiguration within the wait (last state: ${state:-none});" \
      "see $CLUSTER_DIR/logs/brain.log"
  fi
  echo
fi
echo "The cluster keeps running: 'deploy/cluster-status.sh' shows it, 'make cluster-down' stops it."
