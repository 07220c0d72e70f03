#!/usr/bin/env bash
# The shim's Java Thrift code (storm_plugin/src/generated/java), generated from the wire
# contract scheduler_py/service/scheduler.thrift and committed, so that building the jar needs
# no Thrift compiler. storm_plugin/src/generated/scheduler.thrift.sha256 records the IDL they
# were generated from.
#
#   thrift-java.sh build       (Maven's generate-sources runs this) nothing when the recorded
#                              hash is the IDL's; else regenerate when a Thrift compiler of the
#                              libthrift version is on PATH, else fail saying how to regenerate
#   thrift-java.sh regenerate  regenerate now (needs the compiler)
#   thrift-java.sh check       the recorded hash is the IDL's and regenerating gives the committed
#                              files byte for byte (needs the compiler; tests/test_thrift_java.py)
#
# Environment: THRIFT (the compiler, default `thrift`), LIBTHRIFT_VERSION (default: the pom's
# libthrift.version, which Maven passes).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
idl="$here/../scheduler_py/service/scheduler.thrift"
out="$here/src/generated/java"
stamp="$here/src/generated/scheduler.thrift.sha256"
thrift="${THRIFT:-thrift}"
want="${LIBTHRIFT_VERSION:-$(sed -n 's:.*<libthrift.version>\(.*\)</libthrift.version>.*:\1:p' "$here/pom.xml")}"
options="java:generated_annotations=suppress"
howto="regenerate with \`make thrift-java\` (or storm_plugin/thrift-java.sh regenerate) on a machine with the Apache Thrift compiler $want (Debian bookworm: apt-get install thrift-compiler; or THRIFT=/path/to/thrift) and commit storm_plugin/src/generated"

die() { echo "thrift-java.sh: $*" >&2; exit 1; }

idl_hash() { sha256sum "$idl" | cut -d' ' -f1; }
recorded_hash() { [ -f "$stamp" ] && cut -d' ' -f1 "$stamp" || true; }

compiler_ok() {
  command -v "$thrift" >/dev/null 2>&1 || return 1
  [ "$("$thrift" --version 2>/dev/null | awk '{print $NF}')" = "$want" ]
}

generate_into() {  # $1: an empty directory
  compiler_ok || die "expected the Apache Thrift compiler $want as '$thrift', found $(
    command -v "$thrift" >/dev/null 2>&1 && "$thrift" --version || echo none); $howto"
  "$thrift" --gen "$options" -out "$1" "$idl"
}

regenerate() {
  local tmp
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  generate_into "$tmp"
  rm -rf "$out"
  mkdir -p "$(dirname "$out")"
  cp -r "$tmp" "$out"
  echo "$(idl_hash)  scheduler_py/service/scheduler.thrift (thrift $want, $options)" > "$stamp"
}

case "${1:-build}" in
  build)
    if [ "$(idl_hash)" = "$(recorded_hash)" ] && [ -d "$out" ]; then
      exit 0
    fi
    compiler_ok || die "scheduler_py/service/scheduler.thrift (sha256 $(idl_hash)) is not the IDL storm_plugin/src/generated/java was generated from (recorded: $(recorded_hash || true)); $howto"
    regenerate
    echo "thrift-java.sh: scheduler.thrift changed: regenerated storm_plugin/src/generated (commit it with the IDL)" >&2
    ;;
  regenerate)
    regenerate
    ;;
  check)
    [ "$(idl_hash)" = "$(recorded_hash)" ] \
      || die "storm_plugin/src/generated was generated from another scheduler.thrift (sha256 $(recorded_hash) recorded, $(idl_hash) now); $howto"
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    generate_into "$tmp"
    diff -r "$tmp" "$out" >&2 \
      || die "storm_plugin/src/generated/java differs from what thrift $want generates from scheduler.thrift (edited by hand?); $howto"
    ;;
  *)
    die "usage: thrift-java.sh [build|regenerate|check]"
    ;;
esac
