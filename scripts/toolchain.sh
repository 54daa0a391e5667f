#!/usr/bin/env bash
# Installs what the build needs when it is missing (called by `make toolchain`,
# so by `make run` and `make test`):
#   - Debian's rustc-web, cargo-web and rust-web-src (a Rust whose std source
#     lets us build std for wasm32-unknown-unknown), lld-22 (the wasm
#     linker) and brotli (the bundle is served precompressed);
#   - wasm-bindgen-cli at the exact version in Cargo.lock, because the CLI and
#     the wasm-bindgen library must match.
# `scripts/toolchain.sh apt` does only the first, `… wasm-bindgen` only the
# second (`make run` runs them beside the server's build: the bundles'
# compiler is needed long before wasm-bindgen is); no argument does both.
# Only the `wasm-bindgen` binary is built, without TLS (its other binaries,
# the test runner's, download), at opt-level 1 without LTO: it runs a few
# seconds per build, and the full install took 3.7 of a fresh machine's
# first `make run` minutes.
# Environment: CARGO (default cargo), SUDO (default: sudo unless root).
set -euo pipefail
part=${1:-all}
case $part in all | apt | wasm-bindgen) ;; *)
  echo "usage: $0 [apt|wasm-bindgen]" >&2
  exit 2
  ;;
esac
cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
read -ra cargo <<<"$CARGO"

apt_packages=(rustc-web cargo-web rust-web-src lld-22 brotli)

if [ "$part" != wasm-bindgen ]; then
  missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "Installing Debian packages: ${missing[*]}"
    apt_install "${missing[@]}"
  fi
fi
[ "$part" != apt ] || exit 0

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
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=false \
    "${cargo[@]}" install wasm-bindgen-cli --version "$wbg_version" --force \
    --no-default-features --bin wasm-bindgen
fi
