#!/usr/bin/env bash
# Shared by the install scripts: `apt_install PKG…` installs Debian packages
# with apt-get, through sudo unless running as root (or as $SUDO says, which
# the Makefile passes). Sourced, not run.

if [ -z "${SUDO+set}" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi
fi
read -ra _sudo <<<"$SUDO"

apt_install() {
  "${_sudo[@]}" apt-get update -q
  "${_sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
}
