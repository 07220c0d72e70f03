#!/usr/bin/env bash
# Installs, when missing (Debian/Ubuntu), what building and running from a checkout needs:
# `make plugin`, `make dist`, `make demo` and the local cluster scripts. A JDK 17+ and Maven (the
# shim jar; its Java Thrift code is committed, so no Thrift compiler), Python venv support (the
# brain), zip and curl (the Storm download, topology jars), ss (free ports, deploy/*-up.sh).
# Nothing else: no Docker, no browser (deploy/install-system-deps.sh adds what `make test`
# needs). Idempotent.
set -euo pipefail

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v zip >/dev/null 2>&1 || missing+=(zip)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v ss >/dev/null 2>&1 || missing+=(iproute2)  # ss: free ports, what listens where (deploy/*-up.sh)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)

# shellcheck source=deploy/apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
apt_install "${missing[@]}"
