#!/usr/bin/env bash
# Installs the system packages the build needs when they are missing (Debian/Ubuntu):
# a JDK 17+, Maven, the Thrift compiler (generates the shim's Java code from
# scheduler_py/service/scheduler.thrift), Python venv support, zip, curl, ss, and headless
# Chromium with its WebDriver (the dashboard's browser tests, tests/test_dashboard_browser.py),
# and Docker with docker-compose and debootstrap (docker-compose.yml and its test,
# tests/cluster/test_compose.py; deploy/docker-engine.sh starts the engine only when needed).
# Idempotent.
set -euo pipefail

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v thrift >/dev/null 2>&1 || missing+=(thrift-compiler)
command -v zip >/dev/null 2>&1 || missing+=(zip)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v ss >/dev/null 2>&1 || missing+=(iproute2)  # ss: free ports, what listens where (deploy/*-up.sh)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 \
  || missing+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing tools: ${missing[*]}; install them with your package manager and retry" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "installing system packages: ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
