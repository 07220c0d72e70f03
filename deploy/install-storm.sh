#!/usr/bin/env bash
# Assemble an Apache Storm home from Maven Central (idempotent).
#
#   deploy/install-storm.sh            # installs into build/storm-home (or $STORM_HOME)
#   STORM_INSTALL_FORCE=1 deploy/install-storm.sh   # re-resolve the jars
#
# The Storm binary tarball is not on Maven Central; its jars are.  The home is laid
# out like Storm's own distribution (storm-dist/binary/final-package):
#
#   lib/            storm-core + storm-server + dependencies   (daemon classpath)
#   lib-worker/     storm-client + dependencies                (worker classpath)
#   lib-webapp/     storm-webapp + dependencies                (UI; optional, see README)
#   public/         the UI's static files (from storm-webapp's WEB-INF/)
#   extlib/         extra jars for daemons and workers (empty)
#   extlib-daemon/  extra jars for daemons only: the scheduler shim goes here
#   conf/storm.yaml a default single-node config (the cluster scripts generate their own)
#   log4j2/         cluster.xml, worker.xml, client.xml (ours)
#   bin/storm       our launcher (see deploy/storm-home/bin/storm)
#   RELEASE         the Storm version
#
# Environment:
#   STORM_HOME            target directory          (default <repo>/build/storm-home)
#   STORM_VERSION         Storm jars to lay out     (default 2.8.4)
#   STORM_TREE_VERSION    Storm release whose poms give the third-party dependency set
#                         (default 2.8.3: org.apache.storm:storm:2.8.4, the parent pom of all
#                         2.8.4 modules, is missing from the Maven mirror; see README)
#   STORM_WITH_UI         auto|yes|no: install storm-webapp (auto: warn if unavailable)
#   STORM_PLUGIN_JAR      scheduler shim jar to put in extlib-daemon/
#                         (default <repo>/storm_plugin/target/storm-scheduler-plugin.jar)
#   STORM_INSTALL_FORCE   1 = resolve the jars again even if the stamp matches
#   MVN                   maven command (default mvn); MVN_ARGS extra maven arguments
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPLOY="$REPO/deploy"
STORM_HOME="${STORM_HOME:-$REPO/build/storm-home}"
STORM_VERSION="${STORM_VERSION:-2.8.4}"
STORM_TREE_VERSION="${STORM_TREE_VERSION:-2.8.3}"
STORM_WITH_UI="${STORM_WITH_UI:-auto}"
STORM_PLUGIN_JAR="${STORM_PLUGIN_JAR:-$REPO/storm_plugin/target/storm-scheduler-plugin.jar}"
MVN="${MVN:-mvn}"
POM="$DEPLOY/storm-home/pom.xml"

log() { echo "[install-storm] $*"; }
die() { echo "[install-storm] ERROR: $*" >&2; exit 1; }

command -v java >/dev/null || [[ -n "${JAVA_HOME:-}" ]] || die "java not found (need Java 17+): set JAVA_HOME or install openjdk-17-jre-headless"
command -v "$MVN" >/dev/null || die "maven not found ('$MVN'): install maven 3.8+ or set MVN"
command -v python3 >/dev/null || die "python3 not found (used to unpack the UI's static files)"

mvn_run() {  # mvn_run <profile> <goal> <output-dir>
  local -a extra=()
  [[ -n "${MVN_ARGS:-}" ]] && read -r -a extra <<<"$MVN_ARGS"
  # (Debian's maven prints stray colour escapes even with -B; strip them)
  "$MVN" -B -q --no-transfer-progress -Dstyle.color=never -f "$POM" -P "$1" \
    "-Dstorm.version=$STORM_VERSION" "-Dstorm.tree.version=$STORM_TREE_VERSION" \
    "${extra[@]}" "$2" "-DoutputDirectory=$3" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
}
TREE_HINT="if maven says org.apache.storm:storm:pom:$STORM_TREE_VERSION was not found, the parent pom
  of the Storm $STORM_TREE_VERSION modules is missing from the Maven repository: use an older
  STORM_TREE_VERSION (default 2.8.3), see deploy/README.md"

# storm-<artifact>-<tree>.jar -> storm-<artifact>-<version>.jar, from the jars in <jar-dir>
swap_storm_jars() {  # swap_storm_jars <lib-dir> <jar-dir>
  local dir="$1" jars="$2" old base new
  [[ "$STORM_TREE_VERSION" == "$STORM_VERSION" ]] && return 0
  for old in "$dir"/storm-*-"$STORM_TREE_VERSION".jar; do
    [[ -e "$old" ]] || continue
    base="$(basename "$old" "-$STORM_TREE_VERSION.jar")"
    new="$jars/$base-$STORM_VERSION.jar"
    [[ -f "$new" ]] || die "no $base-$STORM_VERSION.jar was resolved (add it to the storm-jars profile of $POM)"
    cp "$new" "$dir/" && rm -f "$old"
  done
}

stamp_value() {
  { echo "storm=$STORM_VERSION tree=$STORM_TREE_VERSION ui=$STORM_WITH_UI"; cat "$POM"; } | sha256sum | cut -d' ' -f1
}

resolve_jars() {
  local stage="$STORM_HOME.stage.$$"
  rm -rf "$stage"; mkdir -p "$stage"
  trap 'rm -rf "'"$stage"'"' EXIT
  log "resolving Storm $STORM_VERSION jars from Maven (dependency tree of $STORM_TREE_VERSION) ..."
  mvn_run storm-jars dependency:copy "$stage/storm-jars" \
    || die "could not fetch the org.apache.storm $STORM_VERSION jars from Maven Central (network? ~/.m2/settings.xml?)"
  mvn_run lib dependency:copy-dependencies "$stage/lib" \
    || die "resolving lib/ failed (see maven output above); $TREE_HINT"
  mvn_run lib-worker dependency:copy-dependencies "$stage/lib-worker" \
    || die "resolving lib-worker/ failed (see maven output above); $TREE_HINT"
  swap_storm_jars "$stage/lib" "$stage/storm-jars"
  swap_storm_jars "$stage/lib-worker" "$stage/storm-jars"

  mkdir -p "$stage/lib-webapp"
  if [[ "$STORM_WITH_UI" != no ]]; then
    if mvn_run lib-webapp dependency:copy-dependencies "$stage/lib-webapp.tmp" >"$stage/webapp.log" 2>&1 \
       && mvn_run storm-jars-webapp dependency:copy "$stage/storm-jars" >>"$stage/webapp.log" 2>&1; then
      mv "$stage/lib-webapp.tmp"/*.jar "$stage/lib-webapp/"
      swap_storm_jars "$stage/lib-webapp" "$stage/storm-jars"
    else
      [[ "$STORM_WITH_UI" == yes ]] && { cat "$stage/webapp.log" >&2; die "storm-webapp could not be resolved (STORM_WITH_UI=yes)"; }
      log "WARNING: org.apache.storm:storm-webapp could not be resolved from the Maven repository;"
      log "         the Storm UI will not be available (everything else works; the cluster scripts"
      log "         poll Nimbus over Thrift instead).  Details: maven said"
      grep -m1 -E 'ERROR|Could not' "$stage/webapp.log" | sed 's/^/           /' || true
    fi
  fi

  for d in lib lib-worker lib-webapp; do
    rm -rf "${STORM_HOME:?}/$d"; mv "$stage/$d" "$STORM_HOME/$d"
  done
  rm -rf "$stage"; trap - EXIT
}

unpack_ui_static_files() {
  local jar
  jar="$(compgen -G "$STORM_HOME/lib-webapp/storm-webapp-*.jar" | head -n1 || true)"
  rm -rf "$STORM_HOME/public"
  [[ -n "$jar" ]] || return 0
  # storm-dist copies storm-webapp's WEB-INF/ to public/ and fills ${packageTimestamp} in the
  # html files (cache busting); UIServer serves $storm.home/public/.
  python3 - "$jar" "$STORM_HOME/public" <<'PY'
import os, sys, time, zipfile
jar, out = sys.argv[1], sys.argv[2]
stamp = str(int(time.time()))
with zipfile.ZipFile(jar) as z:
    for name in z.namelist():
        if not name.startswith("WEB-INF/") or name.endswith("/"):
            continue
        dest = os.path.join(out, name[len("WEB-INF/"):])
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        data = z.read(name)
        if dest.endswith(".html"):
            data = data.replace(b"${packageTimestamp}", stamp.encode())
        with open(dest, "wb") as f:
            f.write(data)
PY
}

mkdir -p "$STORM_HOME"
# one install at a time per Storm home (parallel cluster-up.sh runs all call this script)
exec 9>"$STORM_HOME/.install.lock"
flock 9
STAMP_FILE="$STORM_HOME/.install-stamp"
want="$(stamp_value)"
have="$(cat "$STAMP_FILE" 2>/dev/null || true)"
if [[ "${STORM_INSTALL_FORCE:-0}" != 1 && "$want" == "$have" ]] \
   && compgen -G "$STORM_HOME/lib/storm-server-$STORM_VERSION.jar" >/dev/null \
   && compgen -G "$STORM_HOME/lib-worker/storm-client-$STORM_VERSION.jar" >/dev/null; then
  log "jars of Storm $STORM_VERSION already in $STORM_HOME (STORM_INSTALL_FORCE=1 to redo)"
else
  rm -f "$STAMP_FILE"
  resolve_jars
  unpack_ui_static_files
  echo "$want" >"$STAMP_FILE"
fi

# Everything below is cheap and always refreshed.
mkdir -p "$STORM_HOME"/{bin,conf,log4j2,extlib,extlib-daemon,logs}
install -m 0755 "$DEPLOY/storm-home/bin/storm" "$STORM_HOME/bin/storm"
install -m 0644 "$DEPLOY"/storm-home/log4j2/*.xml "$STORM_HOME/log4j2/"
if [[ ! -f "$STORM_HOME/conf/storm.yaml" ]]; then
  install -m 0644 "$DEPLOY/storm-home/conf/storm.yaml" "$STORM_HOME/conf/storm.yaml"
fi
echo "$STORM_VERSION" >"$STORM_HOME/RELEASE"

if [[ -f "$STORM_PLUGIN_JAR" ]]; then
  install -m 0644 "$STORM_PLUGIN_JAR" "$STORM_HOME/extlib-daemon/"
  # the same jar carries the worker-side monitor (TrafficHook): workers load extlib/*
  install -m 0644 "$STORM_PLUGIN_JAR" "$STORM_HOME/extlib/"
  log "scheduler shim + worker monitor: $(basename "$STORM_PLUGIN_JAR") -> extlib-daemon/, extlib/"
else
  log "scheduler shim not built yet ($STORM_PLUGIN_JAR); extlib-daemon/ left as is"
fi

ui="no (storm-webapp unavailable)"
compgen -G "$STORM_HOME/lib-webapp/storm-webapp-*.jar" >/dev/null && ui=yes
log "Storm $STORM_VERSION home ready: $STORM_HOME"
log "  lib/ $(ls "$STORM_HOME/lib" | wc -l) jars, lib-worker/ $(ls "$STORM_HOME/lib-worker" | wc -l) jars, UI: $ui"
