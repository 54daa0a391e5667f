#!/usr/bin/env bash
# Installs what the build needs when it is missing (called by `make toolchain`,
# so by `make run` and `make test`):
#   - Debian's rustc-web, cargo-web and rust-web-src (a Rust whose std source
#     lets us build std for wasm32-unknown-unknown), lld-22 (the wasm
#     linker) and brotli (the bundle is served precompressed);
#   - wasm-bindgen-cli at the exact version in Cargo.lock, because the CLI and
#     the wasm-bindgen library must match.
# Environment: CARGO (default cargo), SUDO (default: sudo unless root).
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
read -ra cargo <<<"$CARGO"

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

wbg_version=$(awk '/^name = "wasm-bindgen"$/ {
  getline; gsub(/version = |"/, ""); print; exit
}' Cargo.lock)
if [ -z "$wbg_version" ]; then
  echo "toolchain.sh: no wasm-bindgen version found in Cargo.lock" >&2
  exit 1
fi
installed=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$installed" != "$wbg_version" ]; then
  echo "Installing wasm-bindgen-cli $wbg_version (takes several minutes, once per machine)"
  "${cargo[@]}" install wasm-bindgen-cli --version "$wbg_version" --force
fi
