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
  if pid="$(spark_daemon_pid "$daemon")"; then term_group slog "the $daemon" "$pid"; groups+=("$pid"); fi
done
stop_owned slog "$SPARK_STOP_TIMEOUT" spark_pids "${groups[@]}"
# pid files stay while something is left: they name the process groups to stop next time
any_left slog spark_pids "the Spark cluster in $SPARK_STATE_DIR" && exit 1
rm -f "$SPARK_RUN_DIR"/*.pid "$SPARK_RUN_DIR/spark.env"
slog "Spark standalone of $SPARK_STATE_DIR stopped (logs kept in $SPARK_LOG_DIR)"
