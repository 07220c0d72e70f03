#!/usr/bin/env bash
# Make sure a Docker engine answers, starting one when none runs; stop only the engine
# this script started.
#
#   deploy/docker-engine.sh start    # exit 0: an engine answers; stdout says `started` (by
#                                    # this call) or `running` (it was already)
#                                    # exit 77: no engine can run here (the reason on stderr)
#   deploy/docker-engine.sh stop     # stops the engine `start` started, if any; else nothing
#   deploy/docker-engine.sh status
#
# An engine this script starts is Debian's `dockerd` (apt-get install docker.io), run as
# root with its state in the default /var/lib/docker.  Every network it creates is put in
# the benchmarking range 198.18.0.0/15 (RFC 2544): the default bridge on 198.19.254.0/24
# and the address pool of compose networks 198.19.224.0/20 in /24s, so no address this
# project talks to belongs to anyone else.  Its log and pid file are in $DOCKER_ENGINE_DIR
# (default build/docker-engine).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${DOCKER_ENGINE_DIR:-$REPO/build/docker-engine}"
PID_FILE="$DIR/dockerd.pid"
LOG="$DIR/dockerd.log"
START_TIMEOUT="${DOCKER_ENGINE_START_TIMEOUT:-90}"
log() { echo "[docker-engine] $*" >&2; }
unavailable() { log "no Docker engine: $*"; exit 77; }

answers() { timeout 20 docker info >/dev/null 2>&1; }

our_pid() {  # the pid of the dockerd we started, if it still runs
  local pid
  [[ -f "$PID_FILE" ]] || return 1
  pid="$(cat "$PID_FILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q dockerd || return 1
  echo "$pid"
}

start() {
  command -v docker >/dev/null 2>&1 \
    || unavailable "the docker client is not installed (apt-get install docker.io)"
  if answers; then
    if our_pid >/dev/null; then log "running (started by this script, pid $(our_pid))"
    else log "running (not started by this script; it will be left running)"; fi
    echo running
    return 0
  fi
  command -v dockerd >/dev/null 2>&1 \
    || unavailable "no engine answers and dockerd is not installed (apt-get install docker.io)"
  [[ "$(id -u)" -eq 0 ]] || unavailable "no engine answers and starting dockerd needs root"
  if [[ -S /var/run/docker.sock ]] && ! pgrep -x dockerd >/dev/null; then
    rm -f /var/run/docker.sock   # left behind by an engine that was killed
  fi
  pgrep -x dockerd >/dev/null \
    && unavailable "a dockerd runs but does not answer 'docker info' (see its log; stop it and retry)"
  mkdir -p "$DIR"
  log "starting dockerd (log: $LOG)"
  rm -f "$PID_FILE"
  # The engine writes its own pid: under job control (set -m) a background job leads its
  # process group, so setsid forks and $! would be the pid of a setsid that has exited.
  setsid bash -c 'echo $$ >"$0"; exec dockerd --bip 198.19.254.1/24 \
    --default-address-pool base=198.19.224.0/20,size=24' "$PID_FILE" >"$LOG" 2>&1 </dev/null &
  local deadline=$((SECONDS + START_TIMEOUT))
  until [[ -s "$PID_FILE" ]]; do
    ((SECONDS > deadline)) && unavailable "dockerd was not started within ${START_TIMEOUT}s (no pid in $PID_FILE)"
    sleep 0.1
  done
  until answers; do
    if ! our_pid >/dev/null; then
      rm -f "$PID_FILE"
      unavailable "dockerd exited at start: $(tail -n 3 "$LOG" | tr '\n' ' ')"
    fi
    if ((SECONDS > deadline)); then
      stop
      unavailable "dockerd did not answer within ${START_TIMEOUT}s (DOCKER_ENGINE_START_TIMEOUT); last log lines: $(tail -n 3 "$LOG" | tr '\n' ' ')"
    fi
    sleep 1
  done
  log "dockerd answers (pid $(cat "$PID_FILE"), storage driver $(docker info --format '{{.Driver}}'))"
  echo started
}

stop() {
  local pid
  if ! pid="$(our_pid)"; then
    rm -f "$PID_FILE"
    log "no engine started by this script is running; nothing to stop"
    return 0
  fi
  log "stopping dockerd (pid $pid)"
  kill -TERM "$pid"
  local deadline=$((SECONDS + 60))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS > deadline)); then log "dockerd ignored SIGTERM for 60 s: SIGKILL"; kill -KILL "$pid"; fi
    sleep 0.5
  done
  rm -f "$PID_FILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    if answers; then
      if our_pid >/dev/null; then echo "running, started by this script (pid $(our_pid))"
      else echo "running, not started by this script"; fi
    else echo "not running"; exit 3; fi ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
