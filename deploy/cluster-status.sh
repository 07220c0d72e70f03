#!/usr/bin/env bash
# Show the state of the local Storm test cluster in $CLUSTER_DIR (default build/cluster):
# each component's pid and port, then (if Nimbus answers) supervisors and topologies.
#
#   deploy/cluster-status.sh          # exit 0 when zookeeper, nimbus and all supervisors run
#   deploy/cluster-status.sh --json   # Nimbus' view as JSON (stormctl.py summary --json)
set -euo pipefail
CLUSTER_SCRIPT=cluster-status
# shellcheck source=deploy/cluster-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster-common.sh"

if [[ "${1:-}" == --json ]]; then
  exec "$(venv_python)" -m scheduler_py.devtools.stormctl --nimbus "127.0.0.1:$STORM_NIMBUS_PORT" summary --json
fi

port_of() {
  case "$1" in
    zookeeper) echo "$STORM_ZK_PORT" ;;
    nimbus) echo "$STORM_NIMBUS_PORT" ;;
    ui) echo "$STORM_UI_PORT" ;;
    brain) echo "$BRAIN_PORT" ;;
    aggregate) echo "- (PySpark, aggregate.out)" ;;
    supervisor-*) local i="${1#supervisor-}"
                  echo "$(supervisor_thrift_port "$i") slots $(supervisor_slot_ports "$i" | tr ' ' ,) host $(supervisor_host "$i")" ;;
  esac
}

echo "cluster dir: $CLUSTER_DIR   storm home: $STORM_HOME"
ok=yes
for c in $(cluster_components); do
  if pid="$(component_pid "$c")"; then
    n_group=$(pgrep -c -g "$pid" 2>/dev/null || echo 1)
    extra=""
    ((n_group > 1)) && extra="  (+$((n_group - 1)) processes in its group)"
    printf '  %-13s running  pid %-7s port %s%s\n' "$c" "$pid" "$(port_of "$c")" "$extra"
  else
    state=stopped
    [[ -f "$(pidfile "$c")" ]] && state="DEAD (stale pid file)"
    printf '  %-13s %s\n' "$c" "$state"
    case "$c" in zookeeper|nimbus|supervisor-*) ok=no ;; esac
  fi
done

if emu_enabled; then
  CLUSTER_DIR="$CLUSTER_DIR" CLUSTER_PORT_OFFSET="$CLUSTER_PORT_OFFSET" EMU_HOSTS="$EMU_HOSTS" \
    EMU_RACKS="$EMU_RACKS" "$DEPLOY/emulated-hosts.sh" status | sed 's/^/  /'
fi
if component_pid nimbus >/dev/null; then
  echo "nimbus view:"
  "$(venv_python)" -m scheduler_py.devtools.stormctl --nimbus "127.0.0.1:$STORM_NIMBUS_PORT" summary 2>&1 | sed 's/^/  /' || ok=no
fi
echo "logs: $LOG_DIR  (nimbus.log, supervisor-N.log, zookeeper.log, brain.log, workers-artifacts/<topology>/<port>/worker.log)"
[[ $ok == yes ]]
