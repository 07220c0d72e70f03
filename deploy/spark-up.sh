#!/usr/bin/env bash
# Start a Spark standalone cluster on loopback for `scheduler-py aggregate --master`:
# one master and one worker, both from the launcher the installed pyspark package ships
# (`<pyspark>/bin/spark-class`), in the background, then wait until the master lists the
# worker ALIVE and print the master URL (the only line on stdout).
#
#   deploy/spark-up.sh                          # master 7077 (UI 8080), worker 7078 (UI 8081)
#   SPARK_PORT_OFFSET=5000 deploy/spark-up.sh   # 12077 / 13080 / 12078 / 13081
#   scheduler-py aggregate --once --master "$(deploy/spark-up.sh)"
#   deploy/spark-down.sh
#
# Every port (RPC, web UIs, the executors' and block managers') binds to SPARK_BIND_HOST
# (127.0.0.1), not Spark's default of every interface; spark-up checks that with `ss`.
# State in SPARK_STATE_DIR (default build/spark): conf/, logs/master.out and
# logs/worker.out, work/ (executors' dirs and logs), run/*.pid and run/spark.env.
# Settings (environment): SPARK_PORT_OFFSET, SPARK_MASTER_PORT, SPARK_MASTER_WEBUI_PORT,
# SPARK_WORKER_PORT, SPARK_WORKER_WEBUI_PORT, SPARK_WORKER_CORES (1),
# SPARK_WORKER_MEMORY (1g), SPARK_DAEMON_MEMORY (256m), SPARK_READY_TIMEOUT (120 s), VENV.
set -euo pipefail
SPARK_SCRIPT=spark-up
# shellcheck source=deploy/spark-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/spark-common.sh"

# --- pre-flight -----------------------------------------------------------------------------
if [[ -n "${JAVA_HOME:-}" ]]; then JAVA="$JAVA_HOME/bin/java"; else JAVA="$(command -v java || true)"; fi
[[ -n "$JAVA" && -x "$JAVA" ]] \
  || sdie "no java found (JAVA_HOME unset and none on PATH): Spark needs Java 17+; deploy/install-system-deps.sh installs it"
PY="$VENV/bin/python"
[[ -x "$PY" ]] || sdie "no Python venv at $VENV: run 'make venv' (or set VENV)"
SPARK_HOME="$("$PY" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null)" \
  || sdie "$PY cannot import pyspark: pip install -e '.[spark]' into $VENV (make venv does)"
[[ -x "$SPARK_HOME/bin/spark-class" ]] || sdie "pyspark at $SPARK_HOME ships no bin/spark-class"

running=()
for daemon in master worker; do
  spark_daemon_pid "$daemon" >/dev/null && running+=("$daemon")
done
if ((${#running[@]} == 2)); then
  # shellcheck disable=SC1091
  [[ -f "$SPARK_RUN_DIR/spark.env" ]] && source "$SPARK_RUN_DIR/spark.env"  # its ports, not ours
  slog "Spark standalone in $SPARK_STATE_DIR is already running; deploy/spark-down.sh stops it"
  echo "$SPARK_MASTER_URL"
  exit 0
fi
((${#running[@]} == 0)) \
  || sdie "only the ${running[*]} of $SPARK_STATE_DIR is running: run deploy/spark-down.sh first"

busy=()
for port_name in "$SPARK_MASTER_PORT:master" "$SPARK_MASTER_WEBUI_PORT:master-webui" \
                 "$SPARK_WORKER_PORT:worker" "$SPARK_WORKER_WEBUI_PORT:worker-webui"; do
  port_in_use "${port_name%%:*}" && busy+=("$port_name")
done
((${#busy[@]} == 0)) || sdie "ports already in use: ${busy[*]}
  (another Spark or a Storm UI? pick other ports with SPARK_PORT_OFFSET=1000 or SPARK_*_PORT)"

# --- fresh state ------------------------------------------------------------------------------
rm -rf "$SPARK_STATE_DIR/conf" "$SPARK_LOG_DIR" "$SPARK_STATE_DIR/work" "$SPARK_STATE_DIR/local"
mkdir -p "$SPARK_RUN_DIR" "$SPARK_LOG_DIR" "$SPARK_STATE_DIR/conf" "$SPARK_STATE_DIR/work" \
  "$SPARK_STATE_DIR/local"
rm -f "$SPARK_RUN_DIR"/*.pid "$SPARK_RUN_DIR/spark.env"
PROPERTIES="$SPARK_STATE_DIR/conf/spark-daemons.conf"
cp "$(dirname "${BASH_SOURCE[0]}")/spark-daemons.conf" "$PROPERTIES"

# --- start ------------------------------------------------------------------------------------
# SPARK_LOCAL_IP: the web UIs bind to it (else 0.0.0.0), and the executors the worker starts
# inherit it for their RPC and block-manager ports.  SPARK_CONF_DIR: no spark-env.sh or
# spark-defaults.conf from elsewhere.  setsid: each daemon leads a process group that
# also holds its executors, so spark-down.sh stops them together.
daemon_env=(
  "SPARK_HOME=$SPARK_HOME" "SPARK_CONF_DIR=$SPARK_STATE_DIR/conf" "SPARK_LOG_DIR=$SPARK_LOG_DIR"
  "SPARK_LOCAL_IP=$SPARK_BIND_HOST" "SPARK_LOCAL_DIRS=$SPARK_STATE_DIR/local"
  "SPARK_DAEMON_MEMORY=$SPARK_DAEMON_MEMORY" "PYSPARK_PYTHON=$PY" "PATH=$(dirname "$JAVA"):$PATH"
)
start() {  # start <name> <main class> <arguments...>
  local name="$1"; shift
  (
    cd "$SPARK_STATE_DIR"
    exec env "${daemon_env[@]}" setsid "$SPARK_HOME/bin/spark-class" "$@" \
      </dev/null >"$SPARK_LOG_DIR/$name.out" 2>&1
  ) &
  echo $! >"$(spark_pidfile "$name")"
}
fail() {  # fail <name> <message>: show the log, stop what was started, exit 1
  echo "[spark-up] ERROR: $2" >&2
  [[ -s "$SPARK_LOG_DIR/$1.out" ]] && { echo "----- tail $SPARK_LOG_DIR/$1.out" >&2; tail -n 25 "$SPARK_LOG_DIR/$1.out" >&2; }
  echo "[spark-up] stopping what was started: deploy/spark-down.sh" >&2
  SPARK_STATE_DIR="$SPARK_STATE_DIR" "$(dirname "${BASH_SOURCE[0]}")/spark-down.sh" >&2 || true
  exit 1
}
# master_reports <master|worker>: the master's JSON (its web UI) says the master, or our
# worker (by host and port), is ALIVE
master_reports() {
  python3 - "$SPARK_MASTER_JSON" "$1" "$SPARK_BIND_HOST" "$SPARK_WORKER_PORT" <<'PY'
import json, sys, urllib.request
url, what, host, port = sys.argv[1:]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
try:
    state = json.load(opener.open(url, timeout=2))
except (OSError, ValueError):
    sys.exit(1)
if what == "master":
    sys.exit(state.get("status") != "ALIVE")
alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"
         and w.get("host") == host and str(w.get("port")) == port]
sys.exit(not alive)
PY
}
wait_for() {  # wait_for <name> <what it waits for>
  local name="$1" deadline=$((SECONDS + SPARK_READY_TIMEOUT))
  until master_reports "$name"; do
    spark_daemon_pid "$name" >/dev/null || fail "$name" "the $name exited while waiting for $2"
    ((SECONDS < deadline)) || fail "$name" "timed out after ${SPARK_READY_TIMEOUT}s waiting for $2 (SPARK_READY_TIMEOUT)"
    sleep 0.5
  done
}

slog "starting the master on $SPARK_MASTER_URL (web UI http://$SPARK_BIND_HOST:$SPARK_MASTER_WEBUI_PORT)"
start master org.apache.spark.deploy.master.Master --host "$SPARK_BIND_HOST" \
  --port "$SPARK_MASTER_PORT" --webui-port "$SPARK_MASTER_WEBUI_PORT" --properties-file "$PROPERTIES"
wait_for master "the master's web UI $SPARK_MASTER_JSON to report status ALIVE"

slog "starting a worker on $SPARK_BIND_HOST:$SPARK_WORKER_PORT (web UI $SPARK_WORKER_WEBUI_PORT)," \
  "$SPARK_WORKER_CORES core(s), $SPARK_WORKER_MEMORY"
start worker org.apache.spark.deploy.worker.Worker --host "$SPARK_BIND_HOST" \
  --port "$SPARK_WORKER_PORT" --webui-port "$SPARK_WORKER_WEBUI_PORT" \
  --cores "$SPARK_WORKER_CORES" --memory "$SPARK_WORKER_MEMORY" \
  --work-dir "$SPARK_STATE_DIR/work" --properties-file "$PROPERTIES" "$SPARK_MASTER_URL"
wait_for worker "the master ($SPARK_MASTER_JSON) to list the worker $SPARK_BIND_HOST:$SPARK_WORKER_PORT ALIVE"

# --- every listening socket of the two daemons is on SPARK_BIND_HOST -------------------------
for daemon in master worker; do
  pid="$(spark_daemon_pid "$daemon")" || fail "$daemon" "the $daemon exited"
  elsewhere="$(ss -Hltnp 2>/dev/null | grep -F "pid=$pid," | awk -v h="$SPARK_BIND_HOST" \
    '{ n = split($4, a, ":"); addr = substr($4, 1, length($4) - length(a[n]) - 1)
       gsub(/^\[(::ffff:)?|\]$/, "", addr)   # [::ffff:127.0.0.1] is IPv4 127.0.0.1
       if (addr != h) print $4 }')"
  [[ -z "$elsewhere" ]] || fail "$daemon" "the $daemon listens on $elsewhere, expected only $SPARK_BIND_HOST"
done

{
  echo "# written by deploy/spark-up.sh at $(date -Is); spark-down.sh reads it"
  for v in SPARK_STATE_DIR SPARK_BIND_HOST SPARK_PORT_OFFSET SPARK_MASTER_PORT SPARK_MASTER_WEBUI_PORT \
           SPARK_WORKER_PORT SPARK_WORKER_WEBUI_PORT SPARK_WORKER_CORES SPARK_WORKER_MEMORY \
           SPARK_MASTER_URL SPARK_HOME; do
    printf '%s=%q\n' "$v" "${!v}"
  done
} >"$SPARK_RUN_DIR/spark.env"
slog "Spark standalone up: master $SPARK_MASTER_URL, web UIs http://$SPARK_BIND_HOST:$SPARK_MASTER_WEBUI_PORT" \
  "and http://$SPARK_BIND_HOST:$SPARK_WORKER_WEBUI_PORT, logs in $SPARK_LOG_DIR; stop: deploy/spark-down.sh"
echo "$SPARK_MASTER_URL"
