#!/usr/bin/env bash
# Installs, when missing (Debian/Ubuntu), everything `make test` needs (CI runs this on a fresh
# machine, .ci/run): the build dependencies (deploy/install-build-deps.sh: JDK, Maven, Python
# venv, zip, curl, ss), plus the Thrift compiler (tests/test_release.py regenerates the shim's
# committed Java Thrift code from scheduler_py/service/scheduler.thrift and compares), headless
# Chromium with its WebDriver (the dashboard's browser tests, tests/test_dashboard_browser.py),
# Docker with docker-compose and debootstrap (docker-compose.yml and its test,
# tests/cluster/test_compose.py; deploy/docker-engine.sh starts the engine only when needed),
# and systemd-analyze (tests/test_systemd_units.py).
# Idempotent.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"

"$here/install-build-deps.sh"

missing=()
command -v thrift >/dev/null 2>&1 || missing+=(thrift-compiler)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 \
  || missing+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
# systemd-analyze: tests/test_systemd_units.py verifies deploy/systemd/ with it
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)

# shellcheck source=deploy/apt-install.sh
source "$here/apt-install.sh"
apt_install "${missing[@]}"
