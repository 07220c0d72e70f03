# shellcheck shell=bash
# Settings and helpers shared by cluster-up.sh, cluster-down.sh and cluster-status.sh.
# Sourced, not executed.  Every setting can be overridden from the environment; see
# deploy/README.md for the full list.

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPLOY="$REPO/deploy"
# shellcheck source=deploy/process-common.sh
source "$DEPLOY/process-common.sh"

clog() { echo "[${CLUSTER_SCRIPT:-cluster}] $*"; }
cdie() { echo "[${CLUSTER_SCRIPT:-cluster}] ERROR: $*" >&2; exit 1; }

STORM_HOME="${STORM_HOME:-$REPO/build/storm-home}"
CLUSTER_DIR="${CLUSTER_DIR:-$REPO/build/cluster}"
VENV="${VENV:-$REPO/.venv}"
RUN_DIR="$CLUSTER_DIR/run"
LOG_DIR="$CLUSTER_DIR/logs"
CONF_ROOT="$CLUSTER_DIR/conf"
DATA_DIR="$CLUSTER_DIR/data"
BRAIN_STATE_DIR="$DATA_DIR/brain"  # reconfiguration history (scheduler-py history --state-dir)

# cluster-down/cluster-status act on the cluster as it was started: reuse its settings.
# (emulated-hosts.sh up and exec, called by cluster-up, must not read a crashed run's either)
case "${CLUSTER_SCRIPT:-}" in cluster-up|emulated-hosts-up|emulated-hosts-exec) ;; *)
  if [[ -f "$RUN_DIR/cluster.env" ]]; then
  # shellcheck disable=SC1091
    source "$RUN_DIR/cluster.env"
  fi ;;
esac

# Ports.  CLUSTER_PORT_OFFSET shifts every default at once (use multiples of 1000 so
# that two clusters' slot ranges cannot overlap: 1000 -> ZK 3181, Nimbus 7627, ...).
CLUSTER_PORT_OFFSET="${CLUSTER_PORT_OFFSET:-0}"
STORM_ZK_PORT="${STORM_ZK_PORT:-$((2181 + CLUSTER_PORT_OFFSET))}"
STORM_NIMBUS_PORT="${STORM_NIMBUS_PORT:-$((6627 + CLUSTER_PORT_OFFSET))}"
STORM_SUPERVISOR_THRIFT_BASE="${STORM_SUPERVISOR_THRIFT_BASE:-$((6628 + CLUSTER_PORT_OFFSET))}"
STORM_SLOT_BASE="${STORM_SLOT_BASE:-$((6700 + CLUSTER_PORT_OFFSET))}"
STORM_UI_PORT="${STORM_UI_PORT:-$((8080 + CLUSTER_PORT_OFFSET))}"
BRAIN_HOST="${BRAIN_HOST:-127.0.0.1}"
BRAIN_PORT="${BRAIN_PORT:-$((9627 + CLUSTER_PORT_OFFSET))}"
DASHBOARD_PORT="${DASHBOARD_PORT:-$((9628 + CLUSTER_PORT_OFFSET))}"  # scheduler-py dashboard

# Shape of the cluster.
STORM_SUPERVISORS="${STORM_SUPERVISORS:-3}"
STORM_SLOTS_PER_SUPERVISOR="${STORM_SLOTS_PER_SUPERVISOR:-4}"
STORM_SLOT_STRIDE="${STORM_SLOT_STRIDE:-10}"
STORM_NIMBUS_HOST="${STORM_NIMBUS_HOST:-127.0.0.1}"
STORM_ZK_HOST="${STORM_ZK_HOST:-127.0.0.1}"

# Emulated hosts (deploy/emulated-hosts.sh, deploy/README.md "Emulated hosts"): EMU_HOSTS=N
# runs supervisor i in its own network namespace and CPU cgroup, as host hI with address
# emu_host_address i on rack emu_host_rack i; ZooKeeper and Nimbus listen on emu_root_address
# in the root namespace.  EMU_HOSTS=0 (the default): the plain cluster on 127.0.0.x.
EMU_HOSTS="${EMU_HOSTS:-0}"
EMU_RACKS="${EMU_RACKS:-2}"
EMU_HOST_MBIT="${EMU_HOST_MBIT:-100}"
EMU_INTERRACK_MBIT="${EMU_INTERRACK_MBIT:-50}"
EMU_HOST_CPU="${EMU_HOST_CPU:-0.5}"
# every namespace, link, bridge and cgroup of this cluster's emulation starts with this
EMU_PREFIX="spy${CLUSTER_PORT_OFFSET}"
emu_enabled() { [[ "$EMU_HOSTS" != 0 ]]; }
# Each port offset (a multiple of 500) gets its own /21 of 198.18.0.0/15 (RFC 2544), so two
# emulated clusters can run side by side: offset 0 -> 198.18.0.0/21, 500 -> 198.18.8.0/21,
# 3000 -> 198.18.48.0/21.  .1 of its first /24 is the root namespace; rack R is /24 number R.
EMU_PREFIX_LEN=21
emu_block() {  # the first two octets and the first third octet of this cluster's /21
  local k=$((CLUSTER_PORT_OFFSET / 500))
  echo "198.$((18 + k * 8 / 256)) $((k * 8 % 256))"
}
emu_root_address() { local b; read -r -a b <<<"$(emu_block)"; echo "${b[0]}.${b[1]}.1"; }
emu_host_rack() {  # host i -> rack number (contiguous blocks: 6 hosts, 2 racks -> 1 1 1 2 2 2)
  local per=$(((EMU_HOSTS + EMU_RACKS - 1) / EMU_RACKS))
  echo $((($1 - 1) / per + 1))
}
emu_host_address() { local b; read -r -a b <<<"$(emu_block)"; echo "${b[0]}.$((b[1] + $(emu_host_rack "$1"))).$1"; }
emu_check_settings() {  # dies naming the setting that cannot work
  [[ "$EMU_HOSTS" =~ ^[0-9]+$ && "$EMU_HOSTS" -le 200 ]] \
    || cdie "EMU_HOSTS must be a number of hosts 0..200, found '$EMU_HOSTS'"
  [[ "$EMU_RACKS" =~ ^[1-7]$ && "$EMU_RACKS" -le "$EMU_HOSTS" ]] \
    || cdie "EMU_RACKS must be 1..7 and at most EMU_HOSTS ($EMU_HOSTS), found '$EMU_RACKS'"
  ((CLUSTER_PORT_OFFSET % 500 == 0 && CLUSTER_PORT_OFFSET / 500 < 64)) \
    || cdie "emulated hosts need CLUSTER_PORT_OFFSET to be a multiple of 500 below 32000 (it picks the cluster's /21 of 198.18.0.0/15), found $CLUSTER_PORT_OFFSET"
  local v
  for v in EMU_HOST_MBIT EMU_INTERRACK_MBIT EMU_HOST_CPU; do
    [[ "${!v}" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v x="${!v}" 'BEGIN { exit !(x > 0) }' \
      || cdie "$v must be a positive number, found '${!v}'"
  done
}
if emu_enabled; then
  emu_check_settings
  STORM_SUPERVISORS="$EMU_HOSTS"
  STORM_ZK_HOST="$(emu_root_address)"
  STORM_NIMBUS_HOST="$(emu_root_address)"
  STORM_SUPERVISOR_HOSTS="$(for ((i = 1; i <= EMU_HOSTS; i++)); do emu_host_address "$i"; done | xargs)"
fi

# supervisor i (1-based) -> hostname 127.0.0.i (or the i-th word of STORM_SUPERVISOR_HOSTS)
supervisor_host() {
  local i="$1" hosts
  if [[ -n "${STORM_SUPERVISOR_HOSTS:-}" ]]; then
    read -r -a hosts <<<"$STORM_SUPERVISOR_HOSTS"
    [[ -n "${hosts[$((i - 1))]:-}" ]] || { echo "STORM_SUPERVISOR_HOSTS has no entry $i" >&2; return 1; }
    echo "${hosts[$((i - 1))]}"
  else
    echo "127.0.0.$i"
  fi
}
supervisor_thrift_port() { echo $((STORM_SUPERVISOR_THRIFT_BASE + $1 - 1)); }
supervisor_slot_ports() {  # space separated
  local i="$1" j base=$((STORM_SLOT_BASE + ($1 - 1) * STORM_SLOT_STRIDE)) out=()
  for ((j = 0; j < STORM_SLOTS_PER_SUPERVISOR; j++)); do out+=($((base + j))); done
  echo "${out[*]}"
}


# The components, in start order.
cluster_components() {
  local i
  echo zookeeper nimbus
  for ((i = 1; i <= STORM_SUPERVISORS; i++)); do echo "supervisor-$i"; done
  echo ui brain aggregate dashboard
}

pidfile() { echo "$RUN_DIR/$1.pid"; }

# pid of a component if its process is alive and really ours (its command line mentions
# CLUSTER_DIR: guards against a recycled pid), else nothing.
component_pid() { live_pid "$(pidfile "$1")" "$CLUSTER_DIR"; }

# Every process that belongs to this cluster, as pids on one line.  A process is ours if
#  - it is in the process group of a daemon we started (pid files; setsid made each daemon
#    a group leader, and workers, LogWriters and multilang subprocesses stay in their
#    supervisor's group even when reparented), and its command line or working directory
#    points into CLUSTER_DIR (guards against recycled ids); or
#  - wherever it is, it carries one of our markers: a JVM with -Dstorm.local.dir=,
#    -Dstorm.conf.file= or -Dworkers.artifacts= under CLUSTER_DIR, our zoo.cfg, the brain's
#    --log-file under CLUSTER_DIR, or a working directory under CLUSTER_DIR/data (where
#    workers run and where ShellBolt/ShellSpout start streamparse_run).
# A `tail -f $CLUSTER_DIR/logs/...` in another terminal is left alone.
cluster_pids() {
  local groups="" c f
  for c in $(cluster_components); do
    f="$(pidfile "$c")"
    [[ -f "$f" ]] && groups+="$(cat "$f" 2>/dev/null) "
  done
  owned_pids "$CLUSTER_DIR" "$groups" --arg-prefix='-Dstorm.local.dir={dir}/' \
    --arg-prefix='-Dstorm.conf.file={dir}/' --arg-prefix='-Dworkers.artifacts={dir}/' \
    --arg-prefix='{dir}/conf/zookeeper/zoo.cfg' --option-under=--log-file --cwd-under data
}

wait_port() {  # wait_port <host> <port> <timeout-secs> <pid>
  local host="$1" port="$2" timeout="$3" pid="$4" deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 2
    sleep 0.2
  done
  return 1
}

venv_python() {
  if [[ -x "$VENV/bin/python" ]]; then echo "$VENV/bin/python"; else echo python3; fi
}
