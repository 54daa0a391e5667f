#!/usr/bin/env bash
# Usage: scripts/bundle.sh WASM SITE [opt]
#
# Turns the wasm file cargo built for the browser into the site the server
# serves (SITE_ROOT), doing cargo-leptos' job with plain tools:
#   - wasm-bindgen glue into SITE/stage: NAME.js + NAME_bg.wasm;
#   - with `opt`, wasm-opt -Oz (binaryen, from the end-to-end npm packages);
#   - the glue, the module and the stylesheet published under SITE/pkg with
#     a hash of their content in the name (NAME.HASH.js / .wasm / .css),
#     each with a brotli (.br) and a gzip (.gz) copy beside it, and the
#     hashes listed in SITE/hash.txt (`js: HASH`…), which the server reads
#     to link them; the server sends them with a year's immutable caching;
#   - the public/ files into SITE.
# The wasm steps are skipped ("browser bundle up to date") when the staged
# bundle is newer than WASM; a file whose hashed name is already published
# is not compressed again. Release bundles (`opt`) are compressed hardest
# (brotli 11, gzip 9); debug bundles, for the tests, quickly.
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

stage=$site/stage
mkdir -p "$pkg" "$stage"
if [ -f "$stage/${NAME}_bg.wasm" ] && [ "$stage/${NAME}_bg.wasm" -nt "$wasm" ]; then
  echo "browser bundle up to date"
else
  run wasm-bindgen --target web --no-typescript --out-name "$NAME" \
    --out-dir "$stage" "$wasm"
  if [ -n "$opt" ]; then
    run "$E2E/node_modules/.bin/wasm-opt" -Oz --enable-bulk-memory \
      --enable-nontrapping-float-to-int -o "$stage/$NAME.opt.wasm" "$stage/${NAME}_bg.wasm"
    mv -f "$stage/$NAME.opt.wasm" "$stage/${NAME}_bg.wasm"
  fi
fi
cp style/main.css "$stage/$NAME.css"

if [ -n "$opt" ]; then
  brotli_level=11 gzip_level=9
else
  brotli_level=4 gzip_level=1
fi
hashes=()
keep=()
# publish KIND FILE EXT: copies FILE to pkg/NAME.HASH.EXT with .br and .gz.
publish() {
  local kind=$1 file=$2 ext=$3 hash target
  hash=$(sha256sum "$file" | cut -c1-16)
  target=$pkg/$NAME.$hash.$ext
  if [ ! -f "$target.br" ] || [ ! -f "$target.gz" ]; then
    cp "$file" "$target.tmp"
    brotli -f -q "$brotli_level" -o "$target.br" "$target.tmp"
    gzip -c -n "-$gzip_level" "$target.tmp" >"$target.gz"
    mv -f "$target.tmp" "$target"
    echo "published $target ($(stat -c %s "$target") bytes, br $(stat -c %s "$target.br"), gz $(stat -c %s "$target.gz"))"
  fi
  hashes+=("$kind: $hash")
  keep+=("$NAME.$hash.$ext" "$NAME.$hash.$ext.br" "$NAME.$hash.$ext.gz")
}
publish js "$stage/$NAME.js" js
publish wasm "$stage/${NAME}_bg.wasm" wasm
publish css "$stage/$NAME.css" css
printf '%s\n' "${hashes[@]}" >"$site/hash.txt.tmp"
mv -f "$site/hash.txt.tmp" "$site/hash.txt"
# Earlier builds' files (and the unhashed names of bundles before hashing).
for f in "$pkg"/*; do
  name=$(basename "$f")
  case " ${keep[*]} " in
    *" $name "*) ;;
    *) rm -f "$f" ;;
  esac
done
cp -r public/. "$site/"
