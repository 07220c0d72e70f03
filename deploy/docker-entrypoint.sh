#!/usr/bin/env bash
# Entrypoint of the image built by deploy/Dockerfile: one Storm role per container.
#
#   docker-entrypoint.sh zookeeper | nimbus | supervisor | ui | brain | dashboard
#   docker-entrypoint.sh spark-master | spark-worker | aggregate [aggregate options...]
#   docker-entrypoint.sh submit <project> [name] [sparse submit options...]
#   docker-entrypoint.sh <any other command>     (run as is, e.g. bash)
#
# The role's storm.yaml is rendered from deploy/storm.yaml.template with the values
# below (all overridable by environment; docker-compose.yml sets the host names).
# storm.local.hostname is the container's hostname, which compose sets to the service
# name so that other containers (workers!) can resolve it.
set -euo pipefail

APP="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"   # /opt/scheduler-py in the image
DEPLOY="$APP/deploy"
STORM_HOME="${STORM_HOME:-/opt/storm}"
VENV="${VENV:-/opt/venv}"
STATE="${STORM_STATE_DIR:-/var/storm}"
export STORM_CONF_DIR="$STATE/conf" STORM_LOG_DIR="$STATE/logs"
mkdir -p "$STORM_CONF_DIR" "$STORM_LOG_DIR" "$STATE/data"

role="${1:-}"
[[ -n "$role" ]] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
shift

STORM_ZK_HOST="${STORM_ZK_HOST:-zookeeper}"
STORM_ZK_PORT="${STORM_ZK_PORT:-2181}"
STORM_NIMBUS_HOST="${STORM_NIMBUS_HOST:-nimbus}"
STORM_NIMBUS_PORT="${STORM_NIMBUS_PORT:-6627}"
BRAIN_HOST="${BRAIN_HOST:-brain}"
BRAIN_PORT="${BRAIN_PORT:-9627}"

slot_ports() {  # "6700 6701" -> [6700, 6701]
  local out="" p
  for p in ${STORM_SLOT_PORTS:-6700 6701 6702 6703}; do out+="${out:+, }$p"; done
  echo "[$out]"
}

render_conf() {
  python3 "$DEPLOY/render-storm-yaml.py" "$DEPLOY/storm.yaml.template" "$STORM_CONF_DIR/storm.yaml" \
    --extra "${STORM_EXTRA_YAML:-}" \
    "ZK_HOST=$STORM_ZK_HOST" "ZK_PORT=$STORM_ZK_PORT" \
    "NIMBUS_HOST=$STORM_NIMBUS_HOST" "NIMBUS_PORT=$STORM_NIMBUS_PORT" \
    "LOCAL_HOSTNAME=${STORM_LOCAL_HOSTNAME:-$(hostname)}" \
    "LOCAL_DIR=$STATE/data" "LOG_DIR=$STORM_LOG_DIR" \
    "MONITOR_FREQ_SECS=${STORM_MONITOR_FREQ_SECS:-5}" \
    "SCHEDULER=${STORM_SCHEDULER:-io.schedulerpy.storm.BrainScheduler}" \
    "BRAIN_HOST=$BRAIN_HOST" "BRAIN_PORT=$BRAIN_PORT" \
    "BRAIN_TIMEOUT_MS=${SCHEDULER_BRAIN_TIMEOUT_MS:-5000}" \
    "BRAIN_ENABLED=${SCHEDULER_BRAIN_ENABLED:-true}" \
    "SLOT_PORTS=$(slot_ports)" "SUPERVISOR_THRIFT_PORT=${STORM_SUPERVISOR_THRIFT_PORT:-6628}" \
    "WORKER_START_TIMEOUT_SECS=${STORM_WORKER_START_TIMEOUT_SECS:-90}" \
    "WORKER_HEAP_MB=${STORM_WORKER_HEAP_MB:-384}" \
    "WORKER_CHILDOPTS=${STORM_WORKER_CHILDOPTS:--Xmx%HEAP-MEM%m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}" \
    "MESSAGE_TIMEOUT_SECS=${STORM_MESSAGE_TIMEOUT_SECS:-30}" \
    "EXECUTOR_METRICS_SECS=${STORM_EXECUTOR_METRICS_SECS:-5}" \
    "UI_PORT=${STORM_UI_PORT:-8080}" "SUPERVISOR_CPU_CAPACITY=${STORM_SUPERVISOR_CPU_CAPACITY:-400.0}"
}

case "$role" in
  zookeeper)
    render_conf
    mkdir -p "$STATE/data/zookeeper"
    cat >"$STORM_CONF_DIR/zoo.cfg" <<EOF
tickTime=2000
dataDir=$STATE/data/zookeeper
clientPort=$STORM_ZK_PORT
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr
autopurge.purgeInterval=1
EOF
    exec "$STORM_HOME/bin/storm" zookeeper "$STORM_CONF_DIR/zoo.cfg" ;;
  nimbus|supervisor|ui)
    render_conf
    # Nimbus's shim seals every round with the brain's key (scheduler_py/service/shim_auth.py)
    if [[ "$role" == nimbus && -n "${SCHEDULER_BRAIN_KEY_FILE:-}" ]]; then
      printf 'scheduler.brain.key.file: "%s"\n' "$SCHEDULER_BRAIN_KEY_FILE" >>"$STORM_CONF_DIR/storm.yaml"
    fi
    exec "$STORM_HOME/bin/storm" "$role" ;;
  brain)
    # measured costs from ZooKeeper; --nimbus: the reconfiguration controller (its history
    # in the brain-data volume survives restarts)
    exec "$VENV/bin/scheduler-py" serve --host 0.0.0.0 --port "$BRAIN_PORT" \
      --log-file "$STORM_LOG_DIR/brain.log" \
      --zookeeper "$STORM_ZK_HOST:$STORM_ZK_PORT" \
      --nimbus "$STORM_NIMBUS_HOST:$STORM_NIMBUS_PORT" --state-dir /var/storm/brain \
      --plan-log "$STORM_LOG_DIR/plan.jsonl" "$@" ;;
  dashboard)
    # the brain's volume is mounted read-only at /var/brain (docker-compose.yml): its plan
    # log; the operator secret comes from SCHEDULER_PY_SECRET_FILE
    exec "$VENV/bin/scheduler-py" dashboard --host 0.0.0.0 --port "${DASHBOARD_PORT:-9628}" \
      --brain "$BRAIN_HOST:$BRAIN_PORT" --zookeeper "$STORM_ZK_HOST:$STORM_ZK_PORT" \
      --plan-log "${BRAIN_PLAN_LOG:-/var/brain/logs/plan.jsonl}" \
      --token-file "$STATE/dashboard.token" "$@" ;;
  spark-master|spark-worker)
    # Spark standalone from the pyspark package's own launcher, as deploy/spark-up.sh runs it
    # natively; it binds to the container's hostname (= the service name; the web UI binds
    # inside the container, docker-compose.yml publishes the master's on host loopback only)
    SPARK_HOME="$("$VENV/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
    export SPARK_HOME SPARK_CONF_DIR="$STATE/spark-conf" SPARK_LOCAL_DIRS="$STATE/spark-local"
    export PYSPARK_PYTHON="$VENV/bin/python" SPARK_DAEMON_MEMORY="${SPARK_DAEMON_MEMORY:-256m}"
    mkdir -p "$SPARK_CONF_DIR" "$SPARK_LOCAL_DIRS" "$STATE/spark-work"
    cp "$DEPLOY/spark-daemons.conf" "$SPARK_CONF_DIR/spark-daemons.conf"
    common=(--host "$(hostname)" --properties-file "$SPARK_CONF_DIR/spark-daemons.conf")
    if [[ "$role" == spark-master ]]; then
      exec "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master "${common[@]}" \
        --port "${SPARK_MASTER_PORT:-7077}" --webui-port "${SPARK_MASTER_WEBUI_PORT:-8080}"
    fi
    exec "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker "${common[@]}" \
      --port "${SPARK_WORKER_PORT:-7078}" --webui-port "${SPARK_WORKER_WEBUI_PORT:-8081}" \
      --cores "${SPARK_WORKER_CORES:-1}" --memory "${SPARK_WORKER_MEMORY:-1g}" \
      --work-dir "$STATE/spark-work" "${SPARK_MASTER:-spark://spark-master:7077}" ;;
  aggregate)
    # the monitoring aggregation; on a spark:// master the executors reach this driver by
    # the container's hostname (= the service name)
    master="${SPARK_MASTER:-local[*]}"
    driver=()
    [[ "$master" == spark://* ]] && driver=(--spark-conf "spark.driver.host=$(hostname)")
    exec "$VENV/bin/scheduler-py" aggregate --every "${AGGREGATE_EVERY:-30s}" \
      --window "${AGGREGATE_WINDOW:-60s}" --zookeeper "$STORM_ZK_HOST:$STORM_ZK_PORT" \
      --nimbus "$STORM_NIMBUS_HOST:$STORM_NIMBUS_PORT" --master "$master" "${driver[@]}" \
      --log-file "$STORM_LOG_DIR/aggregate.log" "$@" ;;
  submit)
    [[ $# -ge 1 ]] || { echo "usage: submit <project> [name] [sparse options...]" >&2; exit 2; }
    render_conf
    export STORM_NIMBUS="$STORM_NIMBUS_HOST:$STORM_NIMBUS_PORT" VENV
    "$VENV/bin/python" -m scheduler_py.devtools.stormctl --nimbus "$STORM_NIMBUS" wait-cluster \
      --supervisors "${STORM_SUPERVISORS:-3}" --timeout "${STORM_READY_TIMEOUT:-180}"
    # the projects are copied into the image read-only; build jars in a scratch copy
    work="$STATE/topologies"
    rm -rf "$work"; cp -r "$APP/topologies" "$work"
    project="$1"; shift
    [[ -d "$project" ]] || project="$work/$project"
    exec "$DEPLOY/submit-topology.sh" "$project" "$@" ;;
  *)
    exec "$role" "$@" ;;
esac
