# shellcheck shell=bash
# Process helpers shared by cluster-common.sh and spark-common.sh (sourced, not executed).

# live_pid <pid file> <dir>: the pid in the file if that process is alive and its command
# line mentions <dir>/ (guards against a recycled pid), else nothing (status 1).
live_pid() {
  local pid
  [[ -f "$1" ]] || return 1
  pid="$(cat "$1" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$2/" || return 1
  echo "$pid"
}

# owned_pids <dir> "<groups>" [markers...]: the processes a cluster in <dir> started (see
# deploy/owned-pids.py for the rules and the markers), as pids on one line.
owned_pids() {
  python3 "$(dirname "${BASH_SOURCE[0]}")/owned-pids.py" "$@"
}

port_in_use() {  # port_in_use <port>  (a listening TCP socket on any address)
  ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}
