# shellcheck shell=bash
# Settings and helpers shared by spark-up.sh and spark-down.sh (sourced, not executed).
# Every setting can be overridden from the environment; the names of the ports, cores and
# memory are Spark's own (sbin/start-master.sh and start-worker.sh read the same ones).

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=deploy/process-common.sh
source "$REPO/deploy/process-common.sh"
VENV="${VENV:-$REPO/.venv}"
SPARK_STATE_DIR="${SPARK_STATE_DIR:-$REPO/build/spark}"
SPARK_STATE_DIR="$(realpath -m "$SPARK_STATE_DIR")"  # absolute: matched in /proc
SPARK_RUN_DIR="$SPARK_STATE_DIR/run"
SPARK_LOG_DIR="$SPARK_STATE_DIR/logs"
export SPARK_LOG_DIR

# spark-down.sh acts on the cluster as it was started: reuse its settings.
if [[ "${SPARK_SCRIPT:-}" != spark-up && -f "$SPARK_RUN_DIR/spark.env" ]]; then
  # shellcheck disable=SC1091
  source "$SPARK_RUN_DIR/spark.env"
fi

# Everything binds to this address (RPC ports, web UIs, executors, block managers).
SPARK_BIND_HOST="${SPARK_BIND_HOST:-127.0.0.1}"
SPARK_PORT_OFFSET="${SPARK_PORT_OFFSET:-0}"
SPARK_MASTER_PORT="${SPARK_MASTER_PORT:-$((7077 + SPARK_PORT_OFFSET))}"
SPARK_MASTER_WEBUI_PORT="${SPARK_MASTER_WEBUI_PORT:-$((8080 + SPARK_PORT_OFFSET))}"
SPARK_WORKER_PORT="${SPARK_WORKER_PORT:-$((7078 + SPARK_PORT_OFFSET))}"
SPARK_WORKER_WEBUI_PORT="${SPARK_WORKER_WEBUI_PORT:-$((8081 + SPARK_PORT_OFFSET))}"
SPARK_WORKER_CORES="${SPARK_WORKER_CORES:-1}"
SPARK_WORKER_MEMORY="${SPARK_WORKER_MEMORY:-1g}"
SPARK_DAEMON_MEMORY="${SPARK_DAEMON_MEMORY:-256m}"   # heap of the master and worker JVMs
SPARK_READY_TIMEOUT="${SPARK_READY_TIMEOUT:-120}"
SPARK_STOP_TIMEOUT="${SPARK_STOP_TIMEOUT:-15}"
SPARK_MASTER_URL="spark://$SPARK_BIND_HOST:$SPARK_MASTER_PORT"
SPARK_MASTER_JSON="http://$SPARK_BIND_HOST:$SPARK_MASTER_WEBUI_PORT/json/"

slog() { echo "[${SPARK_SCRIPT:-spark}] $*" >&2; }
sdie() { echo "[${SPARK_SCRIPT:-spark}] ERROR: $*" >&2; exit 1; }

spark_pidfile() { echo "$SPARK_RUN_DIR/$1.pid"; }

# pid of the master or worker if its pid file names a live process of SPARK_STATE_DIR
spark_daemon_pid() { live_pid "$(spark_pidfile "$1")" "$SPARK_STATE_DIR"; }

# Every process of this Spark cluster, as pids on one line.  A process is ours if
#  - it carries our marker: an argument under SPARK_STATE_DIR/conf/ (the daemons'
#    --properties-file); or
#  - it is in the process group of a daemon we started (pid files, stale ones too: setsid
#    made each daemon a group leader, and the worker's executors and their pyspark.daemon
#    Python processes stay in its group even when the worker was killed with -9), and its
#    command line or working directory points into SPARK_STATE_DIR (guards recycled ids).
# A `tail -f` of a log in another terminal is left alone.
spark_pids() {
  local groups="" c f
  for c in master worker; do
    f="$(spark_pidfile "$c")"
    [[ -f "$f" ]] && groups+="$(cat "$f" 2>/dev/null) "
  done
  owned_pids "$SPARK_STATE_DIR" "$groups" --arg-prefix='{dir}/conf/'
}
