#!/usr/bin/env bash
# Installs what the build needs when it is missing (called by `make toolchain`,
# so by `make run` and `make test`): Debian's rustc-web, cargo-web and
# rust-web-src (a Rust whose std source lets us build std for
# wasm32-unknown-unknown), lld-22 (the wasm linker) and brotli (the bundles
# are served precompressed). wasm-bindgen is not installed: the build makes
# `sb-wasm-bindgen` (tools/bindgen) from the library at the bundles' version.
# Environment: SUDO (default: sudo unless root).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib.sh
. scripts/lib.sh

apt_packages=(rustc-web cargo-web rust-web-src lld-22 brotli)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "Installing Debian packages: ${missing[*]}"
  apt_install "${missing[@]}"
fi
