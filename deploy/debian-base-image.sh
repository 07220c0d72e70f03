#!/usr/bin/env bash
# Make sure the base image deploy/Dockerfile builds FROM exists, and print its name.
#
#   deploy/debian-base-image.sh [IMAGE]     # IMAGE: default $DEBIAN_IMAGE, else debian:12-slim
#
# 1. IMAGE is already in the engine: print it.
# 2. `docker pull IMAGE` works (within DEBIAN_PULL_TIMEOUT, default 60 s): print it.
# 3. Otherwise (Docker Hub out of reach) build a Debian 12 image locally from Debian's own
#    packages — `debootstrap --variant=minbase bookworm` then `docker import` — tag it
#    $LOCAL_DEBIAN_IMAGE (default scheduler-py/debian:bookworm) and print that.  Made once:
#    later calls find it in the engine.  Needs root and debootstrap (apt-get install
#    debootstrap); the mirror is $DEBIAN_MIRROR (default http://deb.debian.org/debian).
#
# Progress goes to stderr; stdout is only the image name, for
#   DEBIAN_IMAGE="$(deploy/debian-base-image.sh)" docker-compose build
set -euo pipefail

IMAGE="${1:-${DEBIAN_IMAGE:-debian:12-slim}}"
LOCAL_IMAGE="${LOCAL_DEBIAN_IMAGE:-scheduler-py/debian:bookworm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
log() { echo "[debian-base-image] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

present() { docker image inspect "$1" >/dev/null 2>&1; }

if present "$IMAGE"; then echo "$IMAGE"; exit 0; fi
log "pulling $IMAGE"
if timeout "${DEBIAN_PULL_TIMEOUT:-60}" docker pull -q "$IMAGE" >/dev/null 2>&1; then
  echo "$IMAGE"; exit 0
fi
if present "$LOCAL_IMAGE"; then
  log "$IMAGE cannot be pulled; using the local $LOCAL_IMAGE"
  echo "$LOCAL_IMAGE"; exit 0
fi
log "$IMAGE cannot be pulled; building $LOCAL_IMAGE with debootstrap from $MIRROR"
command -v debootstrap >/dev/null 2>&1 \
  || die "debootstrap is not installed (apt-get install debootstrap), and $IMAGE cannot be pulled"
[[ "$(id -u)" -eq 0 ]] || die "debootstrap needs root; run as root or make $IMAGE pullable"
rootfs="$(mktemp -d /tmp/debian-rootfs.XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT
debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1 \
  || die "debootstrap failed; last lines: $(tail -n 5 "$rootfs.log" | tr '\n' ' ')"
rm -f "$rootfs.log"
# what an image does not need: the downloaded .debs and the package lists
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' - "$LOCAL_IMAGE" >/dev/null
log "built $LOCAL_IMAGE ($(docker image inspect -f '{{.Size}}' "$LOCAL_IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
echo "$LOCAL_IMAGE"
