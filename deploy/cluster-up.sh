#!/usr/bin/env bash
# Start the local Storm test cluster: ZooKeeper, Nimbus, 3 supervisors (127.0.0.1/.2/.3),
# the UI (if storm-webapp is installed) and the scheduler brain (if `scheduler-py serve`
# exists), then wait until Nimbus is leader and every supervisor has registered.
#
#   deploy/cluster-up.sh            # default ports: ZK 2181, Nimbus 6627, UI 8080, brain 9627
#   CLUSTER_DIR=/tmp/c2 CLUSTER_PORT_OFFSET=1000 deploy/cluster-up.sh   # an isolated 2nd cluster
#
# State lives in $CLUSTER_DIR (default build/cluster): conf/<daemon>/storm.yaml, data/,
# logs/, run/*.pid and run/cluster.env (the resolved settings, sourceable by tests).
# The state of a previous run is wiped unless CLUSTER_KEEP_STATE=1.
#
#   EMU_HOSTS=6 deploy/cluster-up.sh   # supervisors as emulated hosts: own network namespace,
#                                      # CPU cgroup, bandwidth, 2 racks (deploy/emulated-hosts.sh)
# See deploy/README.md for every environment variable.
set -euo pipefail
CLUSTER_SCRIPT=cluster-up
# shellcheck source=deploy/cluster-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster-common.sh"

T0="${EPOCHREALTIME/./}"
elapsed() { local us=$(( ${EPOCHREALTIME/./} - T0 )); printf '%d.%d' $((us / 1000000)) $((us % 1000000 / 100000)); }

STORM_READY_TIMEOUT="${STORM_READY_TIMEOUT:-120}"
STORM_UI="${STORM_UI:-auto}"            # auto|yes|no
BRAIN="${BRAIN:-auto}"                  # auto|yes|no
BRAIN_ARGS="${BRAIN_ARGS:-}"
BRAIN_CMD="${BRAIN_CMD:-$VENV/bin/scheduler-py}"
BRAIN_SCHEDULER_CLASS="io.schedulerpy.storm.BrainScheduler"
PLUGIN_JAR_NAME="${PLUGIN_JAR_NAME:-storm-scheduler-plugin.jar}"

# --- 0. the Storm home (idempotent; also copies a freshly built shim jar) -----------------
STORM_HOME="$STORM_HOME" "$DEPLOY/install-storm.sh" | sed 's/^/  /'
[[ -x "$STORM_HOME/bin/storm" ]] || cdie "no Storm home at $STORM_HOME (deploy/install-storm.sh failed?)"

# --- 1. already running? -----------------------------------------------------------------
running=() stopped=()
for c in $(cluster_components); do
  if component_pid "$c" >/dev/null; then running+=("$c"); else stopped+=("$c"); fi
done
if ((${#running[@]} > 0)); then
  if [[ " ${running[*]} " == *" nimbus "* && " ${running[*]} " == *" zookeeper "* ]] \
     && [[ -f "$RUN_DIR/cluster.env" ]]; then
    clog "cluster in $CLUSTER_DIR is already running (${running[*]}); nothing to do."
    clog "use deploy/cluster-down.sh first for a fresh one."
    exit 0
  fi
  cdie "a partial cluster is running from $CLUSTER_DIR (${running[*]}); run deploy/cluster-down.sh first"
fi
# Nothing runs, but an earlier run was killed (-9, a crash): its orphaned workers, or its
# emulated hosts' namespaces and cgroups, are still there.  cluster-down removes them.
if [[ -n "$(cluster_pids)" ]] || { ((EUID == 0)) && ip -o link show 2>/dev/null | grep -q ": $EMU_PREFIX-"; }; then
  clog "cleaning up after an earlier run that did not stop (deploy/cluster-down.sh)"
  CLUSTER_DIR="$CLUSTER_DIR" CLUSTER_PORT_OFFSET="$CLUSTER_PORT_OFFSET" "$DEPLOY/cluster-down.sh" 2>&1 | sed 's/^/  /' \
    || cdie "could not clean up after the earlier run in $CLUSTER_DIR (see above)"
fi

# --- 2. scheduler --------------------------------------------------------------------------
shim_jar="$STORM_HOME/extlib-daemon/$PLUGIN_JAR_NAME"
if [[ -z "${STORM_SCHEDULER:-}" ]]; then
  if [[ -f "$shim_jar" ]]; then
    STORM_SCHEDULER="$BRAIN_SCHEDULER_CLASS"
  else
    STORM_SCHEDULER="org.apache.storm.scheduler.DefaultScheduler"
    clog "NOTE: shim jar not built ($REPO/storm_plugin/target/$PLUGIN_JAR_NAME):"
    clog "      using Storm's DefaultScheduler (set STORM_SCHEDULER to choose explicitly)"
  fi
elif [[ "$STORM_SCHEDULER" == "$BRAIN_SCHEDULER_CLASS" && ! -f "$shim_jar" ]]; then
  cdie "STORM_SCHEDULER=$STORM_SCHEDULER but $shim_jar does not exist: build storm_plugin (mvn -f storm_plugin/pom.xml package) first"
fi

# --- 3. brain ------------------------------------------------------------------------------
start_brain=no
if [[ "$BRAIN" != no ]]; then
  if [[ -x "$BRAIN_CMD" ]] && "$BRAIN_CMD" serve --help >/dev/null 2>&1; then
    start_brain=yes
  elif [[ "$BRAIN" == yes ]]; then
    cdie "BRAIN=yes but '$BRAIN_CMD serve' is not available (pip install -e . into $VENV)"
  else
    clog "NOTE: '$BRAIN_CMD serve' is not available yet: not starting the brain (BRAIN=no silences this)"
  fi
fi
SCHEDULER_BRAIN_ENABLED="${SCHEDULER_BRAIN_ENABLED:-$([[ $start_brain == yes ]] && echo true || echo false)}"

# --- 4. UI ---------------------------------------------------------------------------------
start_ui=no
if [[ "$STORM_UI" != no ]]; then
  if compgen -G "$STORM_HOME/lib-webapp/storm-webapp-*.jar" >/dev/null; then
    start_ui=yes
  elif [[ "$STORM_UI" == yes ]]; then
    cdie "STORM_UI=yes but storm-webapp is not installed in $STORM_HOME/lib-webapp (see deploy/README.md)"
  else
    clog "NOTE: storm-webapp not installed: no UI (readiness is checked over Nimbus Thrift)"
  fi
fi

# --- 5. pre-flight ---------------------------------------------------------------------------
PY="$(venv_python)"
"$PY" -c 'import thriftpy2, streamparse.thrift' 2>/dev/null \
  || cdie "$PY cannot import thriftpy2/streamparse (needed to poll Nimbus).  Create the venv:
    python3 -m venv $VENV && $VENV/bin/pip install -e '.[dev]'     (or: pip install streamparse thriftpy2)"
[[ -x "$VENV/bin/streamparse_run" ]] \
  || clog "WARNING: $VENV/bin/streamparse_run missing: Python (streamparse) topologies will not run"

ports=("$STORM_ZK_PORT:zookeeper" "$STORM_NIMBUS_PORT:nimbus")
for ((i = 1; i <= STORM_SUPERVISORS; i++)); do
  ports+=("$(supervisor_thrift_port "$i"):supervisor-$i-thrift")
  for p in $(supervisor_slot_ports "$i"); do ports+=("$p:supervisor-$i-slot"); done
done
[[ $start_ui == yes ]] && ports+=("$STORM_UI_PORT:ui")
[[ $start_brain == yes ]] && ports+=("$BRAIN_PORT:brain")
# the dashboard (docs/dashboard.md) beside the brain, when Flask is installed; DASHBOARD=no skips it
start_dashboard=no
if [[ "${DASHBOARD:-auto}" != no && $start_brain == yes ]]; then
  if "$PY" -c 'import flask' 2>/dev/null; then
    start_dashboard=yes
    ports+=("$DASHBOARD_PORT:dashboard")
  elif [[ "${DASHBOARD:-auto}" == yes ]]; then
    cdie "DASHBOARD=yes but Flask is not installed in $VENV (pip install -e '.[dashboard]')"
  else
    clog "NOTE: Flask is not installed in $VENV: not starting the dashboard (pip install -e '.[dashboard]'; DASHBOARD=no silences this)"
  fi
fi
busy=()
for pc in "${ports[@]}"; do
  port_in_use "${pc%%:*}" && busy+=("$pc")
done
((${#busy[@]} == 0)) || cdie "ports already in use: ${busy[*]}
  (another cluster? deploy/cluster-status.sh / cluster-down.sh, or pick other ports with CLUSTER_PORT_OFFSET=1000)"

# --- 6. fresh state, configs -----------------------------------------------------------------
if [[ "${CLUSTER_KEEP_STATE:-0}" != 1 ]]; then
  rm -rf "$DATA_DIR" "$LOG_DIR" "$CONF_ROOT"
fi
mkdir -p "$RUN_DIR" "$LOG_DIR" "$CONF_ROOT" "$DATA_DIR"
rm -f "$RUN_DIR"/*.pid "$RUN_DIR/cluster.env"

# The worker monitor (deploy/monitor.yaml) is on unless STORM_MONITOR=no; any
# STORM_EXTRA_YAML is appended after it, so it can override the monitor's keys.
extra_yaml="${STORM_EXTRA_YAML:-}"
if [[ "${STORM_MONITOR:-yes}" != no && -f "$STORM_HOME/extlib/$PLUGIN_JAR_NAME" ]]; then
  extra_yaml="$RUN_DIR/extra.yaml"
  cat "$DEPLOY/monitor.yaml" ${STORM_EXTRA_YAML:+"$STORM_EXTRA_YAML"} >"$extra_yaml"
  clog "worker monitor on (deploy/monitor.yaml; STORM_MONITOR=no turns it off)"
fi
# Emulated hosts: Storm learns the racks from the shim jar's StaticRackMapping
# (storm_plugin/README.md), which both the brain's snapshot and Storm's RAS use.
if emu_enabled; then
  emu_yaml="$RUN_DIR/emulated-hosts.yaml"
  {
    echo "# emulated hosts' racks (deploy/cluster-up.sh, EMU_HOSTS=$EMU_HOSTS EMU_RACKS=$EMU_RACKS)"
    if [[ -f "$shim_jar" ]]; then
      echo 'storm.network.topography.plugin: "io.schedulerpy.storm.topography.StaticRackMapping"'
      printf 'scheduler.topography.racks: {'
      for ((i = 1; i <= EMU_HOSTS; i++)); do
        printf '%s"%s": "/rack-%s"' "$([[ $i == 1 ]] || echo ', ')" "$(emu_host_address "$i")" "$(emu_host_rack "$i")"
      done
      echo '}'
    else
      clog "NOTE: shim jar not built: Storm sees every emulated host on /default-rack"
    fi
    [[ -n "$extra_yaml" ]] && cat "$extra_yaml"
  } >"$emu_yaml.tmp"
  mv "$emu_yaml.tmp" "$emu_yaml"
  extra_yaml="$emu_yaml"
fi

render() {  # render <daemon> KEY=VALUE...  -> $CONF_ROOT/<daemon>/storm.yaml
  local daemon="$1"; shift
  # storm.local.dir must exist: RocksDB (Nimbus' metrics store) only creates its last level
  mkdir -p "$CONF_ROOT/$daemon" "$DATA_DIR/$daemon"
  python3 "$DEPLOY/render-storm-yaml.py" "$DEPLOY/storm.yaml.template" "$CONF_ROOT/$daemon/storm.yaml" \
    --extra "$extra_yaml" "$@"
}

common_vars=(
  "ZK_HOST=$STORM_ZK_HOST" "ZK_PORT=$STORM_ZK_PORT"
  "NIMBUS_HOST=$STORM_NIMBUS_HOST" "NIMBUS_PORT=$STORM_NIMBUS_PORT"
  "LOG_DIR=$LOG_DIR"
  "MONITOR_FREQ_SECS=${STORM_MONITOR_FREQ_SECS:-5}"
  "SCHEDULER=$STORM_SCHEDULER"
  "BRAIN_HOST=$BRAIN_HOST" "BRAIN_PORT=$BRAIN_PORT"
  "BRAIN_TIMEOUT_MS=${SCHEDULER_BRAIN_TIMEOUT_MS:-5000}" "BRAIN_ENABLED=$SCHEDULER_BRAIN_ENABLED"
  "WORKER_START_TIMEOUT_SECS=${STORM_WORKER_START_TIMEOUT_SECS:-90}"
  "WORKER_HEAP_MB=${STORM_WORKER_HEAP_MB:-384}"
  "WORKER_CHILDOPTS=${STORM_WORKER_CHILDOPTS:--Xmx%HEAP-MEM%m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath=artifacts/heapdump}"
  "MESSAGE_TIMEOUT_SECS=${STORM_MESSAGE_TIMEOUT_SECS:-30}"
  "EXECUTOR_METRICS_SECS=${STORM_EXECUTOR_METRICS_SECS:-5}"
  "UI_PORT=$STORM_UI_PORT"
)
# supervisor.cpu.capacity (100 = one core): an emulated host declares its cgroup's quota
supervisor_cpu_capacity() {
  if emu_enabled; then awk -v c="$EMU_HOST_CPU" 'BEGIN { printf "%.1f", 100 * c }'; else echo 400.0; fi
}
yaml_list() { local out="" p; for p in "$@"; do out+="${out:+, }$p"; done; echo "[$out]"; }

render nimbus "${common_vars[@]}" "LOCAL_HOSTNAME=$STORM_NIMBUS_HOST" "LOCAL_DIR=$DATA_DIR/nimbus" \
  "SLOT_PORTS=[]" "SUPERVISOR_THRIFT_PORT=$(supervisor_thrift_port 1)" "SUPERVISOR_CPU_CAPACITY=400.0"
# the key the shim seals every round with, next to Nimbus's storm.yaml; the brain gets the same
# file (--shim-key-file), so only this cluster's Nimbus can feed it (scheduler_py/service/shim_auth.py)
BRAIN_KEY_FILE="$CONF_ROOT/nimbus/scheduler-brain.key"
[[ -s "$BRAIN_KEY_FILE" ]] || (umask 077 && python3 -c 'import secrets; print(secrets.token_urlsafe(32))' >"$BRAIN_KEY_FILE")
printf 'scheduler.brain.key.file: "%s"\n' "$BRAIN_KEY_FILE" >>"$CONF_ROOT/nimbus/storm.yaml"
render ui "${common_vars[@]}" "LOCAL_HOSTNAME=$STORM_NIMBUS_HOST" "LOCAL_DIR=$DATA_DIR/ui" \
  "SLOT_PORTS=[]" "SUPERVISOR_THRIFT_PORT=$(supervisor_thrift_port 1)" "SUPERVISOR_CPU_CAPACITY=400.0"
render client "${common_vars[@]}" "LOCAL_HOSTNAME=$STORM_NIMBUS_HOST" "LOCAL_DIR=$DATA_DIR/client" \
  "SLOT_PORTS=[]" "SUPERVISOR_THRIFT_PORT=$(supervisor_thrift_port 1)" "SUPERVISOR_CPU_CAPACITY=400.0"
for ((i = 1; i <= STORM_SUPERVISORS; i++)); do
  # shellcheck disable=SC2046
  render "supervisor-$i" "${common_vars[@]}" "LOCAL_HOSTNAME=$(supervisor_host "$i")" \
    "LOCAL_DIR=$DATA_DIR/supervisor-$i" "SLOT_PORTS=$(yaml_list $(supervisor_slot_ports "$i"))" \
    "SUPERVISOR_THRIFT_PORT=$(supervisor_thrift_port "$i")" \
    "SUPERVISOR_CPU_CAPACITY=$(supervisor_cpu_capacity)"
  if emu_enabled; then  # the rates its links are shaped to, declared as an operator would
    printf 'supervisor.scheduler.meta: {"scheduler.host.link.mbit": "%s", "scheduler.rack.uplink.mbit": "%s"}\n' \
      "$EMU_HOST_MBIT" "$EMU_INTERRACK_MBIT" >>"$CONF_ROOT/supervisor-$i/storm.yaml"
  fi
done

mkdir -p "$CONF_ROOT/zookeeper" "$DATA_DIR/zookeeper"
cat >"$CONF_ROOT/zookeeper/zoo.cfg" <<EOF
# standalone ZooKeeper of the local Storm cluster (generated by deploy/cluster-up.sh)
tickTime=2000
dataDir=$DATA_DIR/zookeeper
clientPort=$STORM_ZK_PORT
clientPortAddress=$STORM_ZK_HOST
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr
autopurge.purgeInterval=1
EOF

# --- 7. start ------------------------------------------------------------------------------
# Every daemon gets its own session/process group (setsid), so cluster-down.sh can stop
# a supervisor together with the workers and Python subprocesses it spawned.
start() {  # start <component> <env-assignments...> -- <command...>
  local name="$1"; shift
  local -a envs=()
  while [[ "$1" != -- ]]; do envs+=("$1"); shift; done
  shift
  (
    cd "$CLUSTER_DIR"
    exec env "${envs[@]}" setsid "$@" </dev/null >"$LOG_DIR/$name.out" 2>&1
  ) &
  echo $! >"$(pidfile "$name")"
}
dump_log() {
  local f
  for f in "$LOG_DIR/$1.out" "$LOG_DIR/$1.log"; do
    [[ -s "$f" ]] && { echo "----- tail $f" >&2; tail -n 25 "$f" >&2; }
  done
  return 0
}
fail() {  # fail <component> <message>
  echo "[cluster-up] ERROR: $2" >&2
  dump_log "$1"
  echo "[cluster-up] stopping what was started: deploy/cluster-down.sh" >&2
  CLUSTER_DIR="$CLUSTER_DIR" "$DEPLOY/cluster-down.sh" >&2 || true
  exit 1
}

java_env=("STORM_LOG_DIR=$LOG_DIR")
[[ -n "${JAVA_HOME:-}" ]] && java_env+=("JAVA_HOME=$JAVA_HOME")

if emu_enabled; then
  if ! CLUSTER_DIR="$CLUSTER_DIR" CLUSTER_PORT_OFFSET="$CLUSTER_PORT_OFFSET" EMU_HOSTS="$EMU_HOSTS" \
      EMU_RACKS="$EMU_RACKS" EMU_HOST_MBIT="$EMU_HOST_MBIT" EMU_INTERRACK_MBIT="$EMU_INTERRACK_MBIT" \
      EMU_HOST_CPU="$EMU_HOST_CPU" "$DEPLOY/emulated-hosts.sh" up 2>&1 | sed 's/^/  /'; then
    fail zookeeper "could not create the emulated hosts (EMU_HOSTS=0 runs without them)"
  fi
fi

clog "starting zookeeper on $STORM_ZK_HOST:$STORM_ZK_PORT"
start zookeeper "${java_env[@]}" "STORM_CONF_DIR=$CONF_ROOT/nimbus" -- \
  "$STORM_HOME/bin/storm" zookeeper "$CONF_ROOT/zookeeper/zoo.cfg"
zk_pid="$(cat "$(pidfile zookeeper)")"
zk_ruok() {  # ZooKeeper four-letter word "ruok" -> "imok"
  local resp=""
  { exec 3<>"/dev/tcp/$STORM_ZK_HOST/$STORM_ZK_PORT"; } 2>/dev/null || return 1
  echo ruok >&3
  read -r -t 2 -n 4 resp <&3 || true
  exec 3>&- 3<&-
  [[ "$resp" == imok ]]
}
zk_ok=no
for _ in $(seq 1 150); do
  kill -0 "$zk_pid" 2>/dev/null || fail zookeeper "zookeeper exited"
  if zk_ruok; then zk_ok=yes; break; fi
  sleep 0.2
done
[[ $zk_ok == yes ]] || fail zookeeper "zookeeper did not answer 'ruok' within 30s"
clog "zookeeper up ($(elapsed)s)"

clog "starting nimbus on $STORM_NIMBUS_HOST:$STORM_NIMBUS_PORT (scheduler: $STORM_SCHEDULER)"
start nimbus "${java_env[@]}" "STORM_CONF_DIR=$CONF_ROOT/nimbus" -- "$STORM_HOME/bin/storm" nimbus

sup_path="$VENV/bin:$PATH"
for ((i = 1; i <= STORM_SUPERVISORS; i++)); do
  h="$(supervisor_host "$i")"
  clog "starting supervisor-$i as $h, slots $(supervisor_slot_ports "$i" | tr ' ' ,), thrift $(supervisor_thrift_port "$i")"
  # PATH: workers inherit the supervisor's environment, and Storm's ShellBolt/ShellSpout
  # look up streamparse_run on it.
  # an emulated host's supervisor (and the workers it starts) runs in its cgroup and namespace
  as_host=()
  emu_enabled && as_host=("$DEPLOY/emulated-hosts.sh" exec "$i" --)
  start "supervisor-$i" "${java_env[@]}" "STORM_CONF_DIR=$CONF_ROOT/supervisor-$i" \
    "STORM_SUPERVISOR_LOG_FILE=supervisor-$i.log" "PATH=$sup_path" "VIRTUAL_ENV=$VENV" \
    "CLUSTER_DIR=$CLUSTER_DIR" "CLUSTER_PORT_OFFSET=$CLUSTER_PORT_OFFSET" -- \
    "${as_host[@]}" "$STORM_HOME/bin/storm" supervisor
done

if [[ $start_ui == yes ]]; then
  clog "starting ui on port $STORM_UI_PORT"
  start ui "${java_env[@]}" "STORM_CONF_DIR=$CONF_ROOT/ui" -- "$STORM_HOME/bin/storm" ui
fi

if [[ $start_brain == yes ]]; then
  clog "starting brain on $BRAIN_HOST:$BRAIN_PORT"
  read -r -a brain_extra <<<"$BRAIN_ARGS"
  # --nimbus switches the reconfiguration controller on (adaptive re-scheduling); its
  # history survives brain restarts in $BRAIN_STATE_DIR
  start brain "PATH=$VENV/bin:$PATH" -- "$BRAIN_CMD" serve --host "$BRAIN_HOST" --port "$BRAIN_PORT" \
    --log-file "$LOG_DIR/brain.log" --plan-log "$LOG_DIR/brain-plans.jsonl" \
    --zookeeper "$STORM_ZK_HOST:$STORM_ZK_PORT" \
    --nimbus "127.0.0.1:$STORM_NIMBUS_PORT" --state-dir "$BRAIN_STATE_DIR" \
    --shim-key-file "$BRAIN_KEY_FILE" "${brain_extra[@]}"
fi

# --- 8. readiness -----------------------------------------------------------------------------
for c in nimbus $(seq -f 'supervisor-%g' 1 "$STORM_SUPERVISORS"); do
  kill -0 "$(cat "$(pidfile "$c")")" 2>/dev/null || fail "$c" "$c exited right after start"
done
if [[ $start_brain == yes ]]; then
  rc=0; wait_port "$BRAIN_HOST" "$BRAIN_PORT" 60 "$(cat "$(pidfile brain)")" || rc=$?
  ((rc == 0)) || fail brain "brain did not listen on $BRAIN_HOST:$BRAIN_PORT ($([[ $rc == 2 ]] && echo exited || echo timeout)); BRAIN=no starts the cluster without it"
  clog "brain up ($(elapsed)s)"
fi
rc=0; wait_port 127.0.0.1 "$STORM_NIMBUS_PORT" "$STORM_READY_TIMEOUT" "$(cat "$(pidfile nimbus)")" || rc=$?
((rc == 0)) || fail nimbus "nimbus did not open port $STORM_NIMBUS_PORT (rc=$rc)"
clog "nimbus thrift port open ($(elapsed)s); waiting for $STORM_SUPERVISORS supervisors to register"
if ! "$PY" -m scheduler_py.devtools.stormctl --nimbus "127.0.0.1:$STORM_NIMBUS_PORT" --interval 0.5 \
      wait-cluster --supervisors "$STORM_SUPERVISORS" --timeout "$STORM_READY_TIMEOUT" | sed 's/^/  /'; then
  for c in nimbus $(seq -f 'supervisor-%g' 1 "$STORM_SUPERVISORS"); do dump_log "$c"; done
  fail nimbus "cluster not ready within ${STORM_READY_TIMEOUT}s"
fi
if [[ $start_ui == yes ]]; then
  rc=0; wait_port 127.0.0.1 "$STORM_UI_PORT" 60 "$(cat "$(pidfile ui)")" || rc=$?
  ((rc == 0)) || fail ui "ui did not open port $STORM_UI_PORT (rc=$rc)"
fi

# The PySpark aggregation of the worker monitor's records (scheduler-py aggregate), when
# the monitor and the brain are on; AGGREGATE=no skips it, AGGREGATE_EVERY sets the period,
# AGGREGATE_PARQUET=yes also keeps the tables' history as Parquet (five more Spark writes a
# cycle, so off by default; docs/monitoring.md, "Monitoring cost").
start_aggregate=no
if [[ "${AGGREGATE:-auto}" != no && $start_brain == yes && -n "${extra_yaml:-}" ]]; then
  start_aggregate=yes
  parquet_args=()
  [[ ${AGGREGATE_PARQUET:-no} == yes ]] && parquet_args=(--parquet "$DATA_DIR/monitoring")
  clog "starting the metrics aggregation (scheduler-py aggregate every ${AGGREGATE_EVERY:-30s})"
  start aggregate "PATH=$VENV/bin:$PATH" -- "$BRAIN_CMD" aggregate --every "${AGGREGATE_EVERY:-30s}" \
    --window "${AGGREGATE_WINDOW:-60s}" --zookeeper "$STORM_ZK_HOST:$STORM_ZK_PORT" \
    --nimbus "127.0.0.1:$STORM_NIMBUS_PORT" "${parquet_args[@]}"
fi

if [[ $start_dashboard == yes ]]; then
  # read-write for whoever can read the token file (0600, created on first start)
  start dashboard "PATH=$VENV/bin:$PATH" -- "$BRAIN_CMD" dashboard --host 127.0.0.1 \
    --port "$DASHBOARD_PORT" --brain "$BRAIN_HOST:$BRAIN_PORT" --plan-log "$LOG_DIR/brain-plans.jsonl" \
    --zookeeper "$STORM_ZK_HOST:$STORM_ZK_PORT" --token-file "$RUN_DIR/dashboard.token"
  rc=0; wait_port 127.0.0.1 "$DASHBOARD_PORT" 60 "$(cat "$(pidfile dashboard)")" || rc=$?
  if ((rc != 0)); then  # the dashboard is optional: the cluster runs without it
    clog "WARNING: the dashboard did not listen on 127.0.0.1:$DASHBOARD_PORT ($([[ $rc == 2 ]] && echo exited || echo timeout)); see $LOG_DIR/dashboard.out"
    start_dashboard=no
  fi
fi

# --- 9. record the settings -------------------------------------------------------------------
{
  echo "# written by deploy/cluster-up.sh at $(date -Is); source it to reach this cluster"
  for v in CLUSTER_DIR STORM_HOME VENV CLUSTER_PORT_OFFSET STORM_ZK_HOST STORM_ZK_PORT \
           STORM_NIMBUS_HOST STORM_NIMBUS_PORT STORM_UI_PORT BRAIN_HOST BRAIN_PORT BRAIN_STATE_DIR BRAIN_KEY_FILE DASHBOARD_PORT \
           STORM_SUPERVISORS STORM_SUPERVISOR_HOSTS STORM_SUPERVISOR_THRIFT_BASE STORM_SLOT_BASE \
           STORM_SLOT_STRIDE STORM_SLOTS_PER_SUPERVISOR STORM_SCHEDULER SCHEDULER_BRAIN_ENABLED \
           EMU_HOSTS EMU_RACKS EMU_HOST_MBIT EMU_INTERRACK_MBIT EMU_HOST_CPU EMU_PREFIX; do
    printf '%s=%q\n' "$v" "${!v:-}"
  done
  printf 'STORM_NIMBUS=%q\n' "127.0.0.1:$STORM_NIMBUS_PORT"
  printf 'SCHEDULER_PY_NIMBUS=%q\n' "127.0.0.1:$STORM_NIMBUS_PORT"  # scheduler-py's name for it
  printf 'STREAMPARSE_NIMBUS=%q\n' "127.0.0.1:$STORM_NIMBUS_PORT"
  printf 'STORM_CONF_DIR=%q\n' "$CONF_ROOT/client"
  printf 'UI_STARTED=%q\nBRAIN_STARTED=%q\n' "$start_ui" "$start_brain"
  printf 'AGGREGATE_STARTED=%q\nDASHBOARD_STARTED=%q\n' "$start_aggregate" "$start_dashboard"
} >"$RUN_DIR/cluster.env"

clog "cluster up in $(elapsed)s: nimbus 127.0.0.1:$STORM_NIMBUS_PORT, zookeeper $STORM_ZK_HOST:$STORM_ZK_PORT,"
clog "  ui $([[ $start_ui == yes ]] && echo "http://127.0.0.1:$STORM_UI_PORT" || echo 'not started'),"\
" brain $([[ $start_brain == yes ]] && echo "$BRAIN_HOST:$BRAIN_PORT" || echo 'not started'), logs in $LOG_DIR"
[[ $start_dashboard == yes ]] \
  && clog "  dashboard http://127.0.0.1:$DASHBOARD_PORT/ (changes need the token in $RUN_DIR/dashboard.token)"
clog "  settings: $RUN_DIR/cluster.env   status: deploy/cluster-status.sh   stop: deploy/cluster-down.sh"
