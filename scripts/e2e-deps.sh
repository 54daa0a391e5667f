#!/usr/bin/env bash
# Installs what the end-to-end suite and the release bundle need when it is
# missing (called by `make e2e-deps`, so by `make run` and `make test`):
#   - Debian's chromium, which Playwright drives (no browser download);
#   - the npm packages of the end-to-end folder (Playwright, and binaryen's
#     wasm-opt for the release bundle), reinstalled with `npm ci` whenever
#     package-lock.json is newer than the installed node_modules.
# Environment: E2E (default end2end), SUDO (default: sudo unless root).
set -euo pipefail
cd "$(dirname "$0")/.."

E2E=${E2E:-end2end}
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

if [ ! -x /usr/bin/chromium ]; then
  echo "Installing Debian chromium"
  apt_install chromium
fi

stamp=$E2E/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$E2E/package-lock.json" -nt "$stamp" ]; then
  (cd "$E2E" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
fi
