#!/usr/bin/env bash
# Usage: scripts/bundle.sh WASM SITE [opt]
#
# Turns the wasm file cargo built for the browser into the site the server
# serves (SITE_ROOT), doing cargo-leptos' job with plain tools:
#   - wasm-bindgen glue: SITE/pkg/NAME.js + SITE/pkg/NAME_bg.wasm, the names
#     Leptos' hydration script loads;
#   - with `opt`, wasm-opt -Oz (binaryen, from the end-to-end npm packages);
#   - the stylesheet as SITE/pkg/NAME.css and the public/ files into SITE.
# The wasm steps are skipped ("browser bundle up to date") when the bundle is
# newer than WASM; the stylesheet and public files are always copied.
# Environment: NAME (default switchboard), E2E (default end2end).
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ] || { [ $# = 3 ] && [ "$3" != opt ]; }; then
  echo "usage: $0 WASM SITE [opt]" >&2
  exit 2
fi
# Resolve the paths before leaving the caller's directory.
wasm=$(realpath -m -- "$1")
site=$(realpath -m -- "$2")
opt=${3:-}
cd "$(dirname "$0")/.."

NAME=${NAME:-switchboard}
E2E=${E2E:-end2end}
pkg=$site/pkg

run() {
  echo "$*"
  "$@"
}

mkdir -p "$pkg"
if [ -f "$pkg/${NAME}_bg.wasm" ] && [ "$pkg/${NAME}_bg.wasm" -nt "$wasm" ]; then
  echo "browser bundle up to date"
else
  run wasm-bindgen --target web --no-typescript --out-name "$NAME" \
    --out-dir "$pkg" "$wasm"
  if [ -n "$opt" ]; then
    run "$E2E/node_modules/.bin/wasm-opt" -Oz --enable-bulk-memory \
      --enable-nontrapping-float-to-int -o "$pkg/$NAME.opt.wasm" "$pkg/${NAME}_bg.wasm"
    mv -f "$pkg/$NAME.opt.wasm" "$pkg/${NAME}_bg.wasm"
  fi
fi
cp style/main.css "$pkg/$NAME.css"
cp -r public/. "$site/"
