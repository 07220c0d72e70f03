# Sourced by deploy/install-build-deps.sh and deploy/install-system-deps.sh.
# apt_install PACKAGE...: install the (possibly repeated) packages with apt-get, as root or
# through sudo; nothing when none is given; a clear error where there is no apt-get.
apt_install() {
  [ $# -eq 0 ] && return 0
  local packages
  read -r -a packages <<< "$(printf '%s\n' "$@" | awk '!seen[$0]++' | tr '\n' ' ')"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing tools: ${packages[*]}; install them with your package manager and retry" >&2
    return 1
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  echo "installing system packages: ${packages[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}"
}
