#!/usr/bin/env bash
# Emulated hosts for the local Storm cluster: every supervisor in its own network namespace
# and CPU cgroup, on rack bridges joined by a core bridge, with tc htb bandwidth limits.
# deploy/cluster-up.sh and cluster-down.sh call this when EMU_HOSTS is set; see
# deploy/README.md, "Emulated hosts".
#
#   EMU_HOSTS=6 deploy/emulated-hosts.sh up       # create them (removes leftovers first)
#   deploy/emulated-hosts.sh down                 # remove everything named $EMU_PREFIX-*
#   deploy/emulated-hosts.sh status               # hosts, rates, CPU quota, counters
#   deploy/emulated-hosts.sh exec I -- CMD...     # exec CMD as host I (its cgroup + netns)
#
# Layout for prefix P (spy<CLUSTER_PORT_OFFSET>), addresses from this cluster's /21 of
# 198.18.0.0/15 (deploy/cluster-common.sh, emu_block):
#   bridge P-core  (root namespace address .1: ZooKeeper, Nimbus) -- veth P-rRc/P-rRu -- bridge P-rR
#   bridge P-rR -- veth P-hI / eth0 in namespace P-hI (host I, address <rack R's /24>.I)
#   htb: P-hI both ways at EMU_HOST_MBIT, P-rRc and P-rRu at EMU_INTERRACK_MBIT
#   cgroup <cpu hierarchy>/P/hI: EMU_HOST_CPU cores (v1 cpu.cfs_quota_us, v2 cpu.max)
# State for other tools: $CLUSTER_DIR/run/emulated-hosts.json.
set -euo pipefail
ACTION="${1:-}"
CLUSTER_SCRIPT="emulated-hosts-${ACTION:-help}"
# shellcheck source=deploy/cluster-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster-common.sh"
CLUSTER_SCRIPT=emulated-hosts

STATE_FILE="$RUN_DIR/emulated-hosts.json"
CGROUP_ROOT="${EMU_CGROUP_ROOT:-/sys/fs/cgroup}"
PERIOD_US=100000

netns_of() { echo "$EMU_PREFIX-h$1"; }
veth_of() { echo "$EMU_PREFIX-h$1"; }        # root-namespace end; eth0 inside the namespace
rack_bridge() { echo "$EMU_PREFIX-r$1"; }
uplink_core() { echo "$EMU_PREFIX-r$1c"; }   # on the core bridge
uplink_rack() { echo "$EMU_PREFIX-r$1u"; }   # on the rack bridge
core_bridge() { echo "$EMU_PREFIX-core"; }

# cgroup version and directories (the shell twin of scheduler_py/monitoring/priority.py's
# cgroup_version): 2 for the unified hierarchy, 1 for a v1 cpu controller
cgroup_version() {
  if [[ -f "$CGROUP_ROOT/cgroup.controllers" ]]; then echo 2
  elif [[ -f "$CGROUP_ROOT/cpu/cpu.cfs_quota_us" ]]; then echo 1
  else return 1
  fi
}
# the group directories of host I (v1: the cpu one first, then cpuacct for the CPU time
# when that is a separate hierarchy); with no I, the parent group(s)
cgroup_dirs() {
  local sub="$EMU_PREFIX${1:+/h$1}"
  if [[ "$(cgroup_version)" == 2 ]]; then echo "$CGROUP_ROOT/$sub"; return; fi
  echo "$CGROUP_ROOT/cpu/$sub"
  if [[ -d "$CGROUP_ROOT/cpuacct" && "$(realpath "$CGROUP_ROOT/cpuacct")" != "$(realpath "$CGROUP_ROOT/cpu")" ]]; then
    echo "$CGROUP_ROOT/cpuacct/$sub"
  fi
}

# shape <dev> <mbit> [netns]: htb at <mbit> on the egress of <dev>, a pfifo queue under it
shape() {
  local dev="$1" mbit="$2"
  local -a in=()
  [[ -n "${3:-}" ]] && in=(ip netns exec "$3")
  "${in[@]}" tc qdisc replace dev "$dev" root handle 1: htb default 1
  "${in[@]}" tc class replace dev "$dev" parent 1: classid 1:1 htb rate "${mbit}mbit" ceil "${mbit}mbit" quantum 60000
  "${in[@]}" tc qdisc replace dev "$dev" parent 1:1 handle 10: pfifo limit 1000
}

check_can_emulate() {
  ((EUID == 0)) || cdie "emulated hosts need root (network namespaces, bridges, tc, cgroups); run as root or without EMU_HOSTS"
  local c
  for c in ip tc nsenter awk; do
    command -v "$c" >/dev/null || cdie "'$c' not found: install iproute2 / util-linux (deploy/install-system-deps.sh)"
  done
  cgroup_version >/dev/null \
    || cdie "no cgroup v2 hierarchy and no v1 cpu controller under $CGROUP_ROOT: the per-host CPU limit cannot be set"
  local longest
  longest="$(uplink_core "$EMU_RACKS")"
  ((${#longest} <= 15)) || cdie "link name $longest is longer than the kernel's 15 characters (CLUSTER_PORT_OFFSET too large)"
}

# --- firewall: bridged traffic must pass when another tool set FORWARD to DROP ----------------
# Docker loads br_netfilter (bridged frames then traverse iptables' FORWARD chain) and sets that
# chain's policy to DROP, which cuts the emulated hosts off from ZooKeeper and from each other.
# One ACCEPT rule per bridge of ours, tagged with our prefix so emu_down removes exactly those.
ours_forward_rules() {
  command -v iptables >/dev/null || return 0
  iptables -S FORWARD 2>/dev/null | grep -F -- "--comment $EMU_PREFIX-emulated-hosts" || true
}
allow_forwarding() {  # allow_forwarding BRIDGE
  command -v iptables >/dev/null || return 0
  iptables -I FORWARD -i "$1" -o "$1" -m comment --comment "$EMU_PREFIX-emulated-hosts" -j ACCEPT \
    || clog "WARNING: could not add an iptables ACCEPT rule for bridge $1; if FORWARD drops (Docker running), the hosts cannot reach ZooKeeper"
}
remove_forwarding_rules() {
  local rule
  while IFS= read -r rule; do
    [[ -n "$rule" ]] || continue
    # shellcheck disable=SC2086  # the rule's words are iptables arguments
    iptables ${rule/-A FORWARD/-D FORWARD} || clog "ERROR: cannot remove iptables rule: $rule"
  done < <(ours_forward_rules)
}

# --- down: everything with our prefix, whatever the state file says ------------------------
ours_netns() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$EMU_PREFIX-h[0-9]+$" || true; }
ours_links() { ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^$EMU_PREFIX-" || true; }
ours_cgroups() {  # deepest first
  local d
  for d in "$CGROUP_ROOT/cpu/$EMU_PREFIX" "$CGROUP_ROOT/cpuacct/$EMU_PREFIX" "$CGROUP_ROOT/$EMU_PREFIX"; do
    [[ -d "$d" ]] && find "$d" -mindepth 1 -maxdepth 1 -type d -name 'h*' && echo "$d"
  done
  return 0
}
emu_down() {
  local ns pids link group left=0
  remove_forwarding_rules
  [[ -n "$(ours_netns)$(ours_links)$(ours_cgroups)" ]] || { rm -f "$STATE_FILE"; return 0; }
  for ns in $(ours_netns); do
    pids="$(ip netns pids "$ns" 2>/dev/null | xargs || true)"
    if [[ -n "$pids" ]]; then
      clog "ERROR: processes still run in namespace $ns ($pids): stop the cluster first (deploy/cluster-down.sh)"
      left=1
      continue
    fi
    ip netns delete "$ns"
  done
  # deleting a namespace deletes the veth pairs with an end in it; bridges and uplinks remain
  for link in $(ours_links); do
    ip link delete "$link" 2>/dev/null || true  # the peer of an already deleted veth is gone too
  done
  for group in $(ours_cgroups); do
    rmdir "$group" 2>/dev/null || { clog "ERROR: cannot remove cgroup $group (processes in it: $(xargs <"$group/cgroup.procs" 2>/dev/null))"; left=1; }
  done
  rm -f "$STATE_FILE"
  if [[ -n "$(ours_netns)$(ours_links)$(ours_forward_rules)" ]]; then
    clog "ERROR: left behind: $(ours_netns | xargs) $(ours_links | xargs) $(ours_forward_rules | xargs)"
    left=1
  fi
  ((left == 0)) && clog "removed the emulated hosts: no namespace, link, bridge or cgroup named $EMU_PREFIX* left"
  return "$left"
}

# --- up ------------------------------------------------------------------------------------------
emu_up() {
  emu_enabled || cdie "EMU_HOSTS is 0 or unset: nothing to emulate"
  check_can_emulate
  if [[ -n "$(ours_netns)$(ours_links)$(ours_cgroups)$(ours_forward_rules)" ]]; then
    clog "removing the leftovers of an earlier run (prefix $EMU_PREFIX)"
    emu_down >/dev/null || cdie "could not remove the leftovers of an earlier run with prefix $EMU_PREFIX (see above)"
  fi
  local version core root i r ns veth addr dir quota
  version="$(cgroup_version)"
  core="$(core_bridge)" root="$(emu_root_address)"
  clog "$EMU_HOSTS hosts in $EMU_RACKS racks, ${EMU_HOST_CPU} core and ${EMU_HOST_MBIT} Mbit/s each, ${EMU_INTERRACK_MBIT} Mbit/s between racks (cgroup v$version, prefix $EMU_PREFIX)"

  ip link add "$core" type bridge
  ip addr add "$root/$EMU_PREFIX_LEN" dev "$core"
  ip link set "$core" up
  allow_forwarding "$core"
  for ((r = 1; r <= EMU_RACKS; r++)); do
    ip link add "$(rack_bridge "$r")" type bridge
    # no ARP on the rack bridge's own interface: the root namespace would answer for its
    # address there too, and hosts sending to ZooKeeper/Nimbus would skip the uplink
    ip link set "$(rack_bridge "$r")" arp off up
    allow_forwarding "$(rack_bridge "$r")"
    ip link add "$(uplink_core "$r")" type veth peer name "$(uplink_rack "$r")"
    ip link set "$(uplink_core "$r")" master "$core" up
    ip link set "$(uplink_rack "$r")" master "$(rack_bridge "$r")" up
    shape "$(uplink_core "$r")" "$EMU_INTERRACK_MBIT"
    shape "$(uplink_rack "$r")" "$EMU_INTERRACK_MBIT"
  done

  for ((i = 1; i <= EMU_HOSTS; i++)); do
    ns="$(netns_of "$i")" veth="$(veth_of "$i")" addr="$(emu_host_address "$i")"
    r="$(emu_host_rack "$i")"
    ip netns add "$ns"
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    ip link set "$veth" master "$(rack_bridge "$r")" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$addr/$EMU_PREFIX_LEN" dev eth0
    ip -n "$ns" link set eth0 up
    shape "$veth" "$EMU_HOST_MBIT"         # into the host
    shape eth0 "$EMU_HOST_MBIT" "$ns"      # out of the host

    quota="$(awk -v c="$EMU_HOST_CPU" -v p="$PERIOD_US" 'BEGIN { printf "%d", c * p }')"
    for dir in $(cgroup_dirs "$i"); do
      mkdir -p "$dir"
      if [[ "$version" == 2 ]]; then
        grep -qw cpu "$CGROUP_ROOT/cgroup.subtree_control" || echo +cpu >"$CGROUP_ROOT/cgroup.subtree_control"
        grep -qw cpu "$(dirname "$dir")/cgroup.subtree_control" || echo +cpu >"$(dirname "$dir")/cgroup.subtree_control"
        echo "$quota $PERIOD_US" >"$dir/cpu.max"
      elif [[ -f "$dir/cpu.cfs_quota_us" ]]; then
        echo "$PERIOD_US" >"$dir/cpu.cfs_period_us"
        echo "$quota" >"$dir/cpu.cfs_quota_us"
      fi
    done
  done
  write_state "$version"
  clog "hosts up: $(for ((i = 1; i <= EMU_HOSTS; i++)); do printf 'h%d=%s ' "$i" "$(emu_host_address "$i")"; done)"
  clog "state: $STATE_FILE"
}

write_state() {  # the JSON the benchmarks read (shape documented in deploy/README.md)
  local version="$1" i r hosts="" racks=""
  for ((i = 1; i <= EMU_HOSTS; i++)); do
    hosts+="${hosts:+,
    }{\"name\": \"h$i\", \"supervisor\": $i, \"netns\": \"$(netns_of "$i")\", \"address\": \"$(emu_host_address "$i")\", \"rack\": \"/rack-$(emu_host_rack "$i")\", \"veth_root\": \"$(veth_of "$i")\", \"cgroup\": \"$(cgroup_dirs "$i" | sed -n 1p)\", \"cpu_cores\": $(awk -v c="$EMU_HOST_CPU" 'BEGIN { print c + 0.0 }')}"
  done
  for ((r = 1; r <= EMU_RACKS; r++)); do
    racks+="${racks:+,
    }{\"name\": \"/rack-$r\", \"bridge\": \"$(rack_bridge "$r")\", \"uplink_veth_root\": \"$(uplink_core "$r")\"}"
  done
  mkdir -p "$RUN_DIR"
  cat >"$STATE_FILE.tmp" <<EOF
{"core_bridge": "$(core_bridge)", "root_address": "$(emu_root_address)",
  "host_mbit": $EMU_HOST_MBIT, "interrack_mbit": $EMU_INTERRACK_MBIT, "cgroup_version": $version,
  "hosts": [
    $hosts
  ],
  "racks": [
    $racks
  ]}
EOF
  python3 -m json.tool "$STATE_FILE.tmp" >/dev/null || cdie "wrote invalid JSON to $STATE_FILE.tmp"
  mv "$STATE_FILE.tmp" "$STATE_FILE"
}

# --- exec: become host I (cgroup first, then the namespace) --------------------------------------
emu_exec() {
  local i="${1:-}" dir
  [[ "$i" =~ ^[0-9]+$ && "${2:-}" == -- ]] || cdie "usage: emulated-hosts.sh exec I -- COMMAND..."
  shift 2
  [[ -e "/run/netns/$(netns_of "$i")" ]] || cdie "no namespace $(netns_of "$i"): run 'emulated-hosts.sh up' first"
  for dir in $(cgroup_dirs "$i"); do echo $$ >"$dir/cgroup.procs"; done
  # nsenter changes only the network namespace (ip netns exec would also remount /sys,
  # hiding /sys/fs/cgroup from the JVM's container support)
  exec nsenter --net="/run/netns/$(netns_of "$i")" -- "$@"
}

emu_status() {
  local ns i dir version addr rack
  if [[ -z "$(ours_netns)$(ours_links)" ]]; then
    echo "emulated hosts: none (prefix $EMU_PREFIX)"
    return 0
  fi
  version="$(cgroup_version || echo '?')"
  echo "emulated hosts (prefix $EMU_PREFIX, core bridge $(core_bridge) $(emu_root_address), cgroup v$version):"
  for ns in $(ours_netns | sort -V); do
    i="${ns##*-h}"
    dir="$(cgroup_dirs "$i" | sed -n 1p)"
    addr="$(ip -n "$ns" -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}')"
    # rack R is the R-th /24 after the root namespace's (emu_host_address)
    rack="$(( $(cut -d. -f3 <<<"$addr") - $(cut -d. -f3 <<<"$(emu_root_address)") ))"
    # the veth's root end receives what the host sends
    printf '  h%-3s %-15s %-8s sent %-12s received %-12s rate %-8s cpu %s throttled %s\n' "$i" "$addr" "/rack-$rack" \
      "$(cat "/sys/class/net/$(veth_of "$i")/statistics/rx_bytes" 2>/dev/null || echo -)" \
      "$(cat "/sys/class/net/$(veth_of "$i")/statistics/tx_bytes" 2>/dev/null || echo -)" \
      "$(tc class show dev "$(veth_of "$i")" 2>/dev/null | grep -o 'rate [^ ]*' | head -1 | cut -d' ' -f2)" \
      "$(cat "$dir/cpu.max" 2>/dev/null || echo "$(cat "$dir/cpu.cfs_quota_us" 2>/dev/null)/$(cat "$dir/cpu.cfs_period_us" 2>/dev/null)")" \
      "$(awk '/nr_throttled/ {print $2}' "$dir/cpu.stat" 2>/dev/null)"
  done
}

case "$ACTION" in
  up) emu_up ;;
  down) emu_down ;;
  status) emu_status ;;
  exec) shift; emu_exec "$@" ;;
  -h|--help|help|"") sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) cdie "unknown action '$ACTION' (up, down, status, exec; --help)" ;;
esac
