#!/usr/bin/env bash
# Installs binaryen's wasm-opt (npm package `binaryen`, pinned in
# scripts/wasm-opt/package-lock.json) for the release browser bundles, alone:
# `make run` needs it, and nothing else of the end-to-end suite (no browser,
# no Playwright). Debian's binaryen (108) produces a broken module.
# Reinstalled with `npm ci` whenever the lock file is newer than the install.
set -euo pipefail
cd "$(dirname "$0")/wasm-opt"

stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
  npm ci --no-audit --no-fund
fi
