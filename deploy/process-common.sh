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

# term_group <log function> <name> <pid>: SIGTERM to the process group that <pid> leads
# (setsid at start), or to <pid> alone when it leads none.
term_group() {
  "$1" "stopping $2 (pid $3, process group $3)"
  kill -TERM -- "-$3" 2>/dev/null || kill -TERM "$3" 2>/dev/null || true
}

# stop_owned <log function> <timeout secs> <list function> <group>...: SIGTERM to every
# process the list function prints (the caller has signalled the groups), wait up to
# <timeout> seconds until it prints nothing, then SIGKILL the groups and what is left.
stop_owned() {
  local say="$1" timeout="$2" list="$3" deadline left group pid
  shift 3
  for pid in $("$list"); do kill -TERM "$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + timeout))
  while [[ -n "$("$list")" ]] && ((SECONDS < deadline)); do sleep 0.3; done
  left="$("$list")"
  [[ -n "$left" ]] || return 0
  "$say" "still running after ${timeout}s, sending SIGKILL: $left"
  for group in "$@"; do kill -KILL -- "-$group" 2>/dev/null || true; done
  for pid in $left; do kill -KILL "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    [[ -z "$("$list")" ]] && break
    sleep 0.1
  done
}

# any_left <log function> <list function> <what>: status 0, naming them, when processes
# the list function prints are still alive; 1 when none is.
any_left() {
  local left pid
  left="$("$2")"
  [[ -n "$left" ]] || return 1
  "$1" "ERROR: processes of $3 still alive:"
  for pid in $left; do ps -o pid=,pgid=,args= -p "$pid" 2>/dev/null | cut -c1-200 | sed 's/^/  /'; done
  return 0
}

port_in_use() {  # port_in_use <port>  (a listening TCP socket on any address)
  ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}
