#!/usr/bin/env bash
# Stop the Spark standalone cluster of deploy/spark-up.sh (worker, its executors, master),
# leaving no process behind.  Idempotent; works after a crash or `kill -9` (stale pid files,
# executors orphaned by a killed worker).
#
#   deploy/spark-down.sh                                  # the cluster in build/spark
#   SPARK_STATE_DIR=/tmp/spark2 deploy/spark-down.sh
#
# 1. SIGTERM to the process group of the worker (its executors are in it), then the master;
# 2. any other process of the cluster (see spark_pids in spark-common.sh) gets SIGTERM too;
# 3. after SPARK_STOP_TIMEOUT seconds (default 15) SIGKILL to what is left.
# Exit status 0 when nothing of the cluster is left running.
set -euo pipefail
SPARK_SCRIPT=spark-down
# shellcheck source=deploy/spark-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/spark-common.sh"

groups=()
for daemon in worker master; do
  if pid="$(spark_daemon_pid "$daemon")"; then
    slog "stopping the $daemon (pid $pid, process group $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    groups+=("$pid")
  fi
done
for pid in $(spark_pids); do kill -TERM "$pid" 2>/dev/null || true; done

deadline=$((SECONDS + SPARK_STOP_TIMEOUT))
while [[ -n "$(spark_pids)" ]] && ((SECONDS < deadline)); do sleep 0.3; done
left="$(spark_pids)"
if [[ -n "$left" ]]; then
  slog "still running after ${SPARK_STOP_TIMEOUT}s, sending SIGKILL: $left"
  for group in "${groups[@]}"; do kill -KILL -- "-$group" 2>/dev/null || true; done
  for pid in $left; do kill -KILL "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    [[ -z "$(spark_pids)" ]] && break
    sleep 0.1
  done
fi

left="$(spark_pids)"
if [[ -n "$left" ]]; then
  slog "ERROR: processes of the Spark cluster in $SPARK_STATE_DIR still alive:"
  for pid in $left; do ps -o pid=,pgid=,args= -p "$pid" 2>/dev/null | cut -c1-200 | sed 's/^/  /' >&2; done
  exit 1
fi
rm -f "$SPARK_RUN_DIR"/*.pid "$SPARK_RUN_DIR/spark.env"
slog "Spark standalone of $SPARK_STATE_DIR stopped (logs kept in $SPARK_LOG_DIR)"
