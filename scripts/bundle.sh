#!/usr/bin/env bash
# Usage: scripts/bundle.sh SITE debug|opt|stage BUNDLE=WASM [BUNDLE=WASM…]
#
# `stage` does only the wasm steps of `opt` (wasm-bindgen, wasm-opt) and
# publishes nothing: `make run` stages each bundle as soon as cargo built
# it, beside the next bundle's build, so the last `opt` call finds them up
# to date. It skips quietly while wasm-bindgen is not built yet (`make run`
# builds it with the server, beside the bundles).
#
# Turns the wasm files cargo built for the browser, one per bundle (a group
# of pages: `src/bundles/BUNDLE.rs`), into the site the server serves
# (SITE_ROOT), doing cargo-leptos' job with plain tools:
#   - wasm-bindgen glue into SITE.stage/BUNDLE: BUNDLE.js + BUNDLE_bg.wasm
#     (beside the site, not in it: the server serves the site root's files);
#   - with `opt`, wasm-opt -Oz (binaryen, installed by scripts/wasm-opt.sh);
#   - each bundle's glue and module, and the one stylesheet, published under
#     SITE/pkg with a hash of their content in the name (BUNDLE.HASH.js /
#     BUNDLE.HASH.wasm, NAME.HASH.css), each with a brotli (.br) and a gzip
#     (.gz) copy beside it; each bundle's hashes listed in
#     SITE/hash-BUNDLE.txt (`js: HASH`, `wasm: HASH`) and the stylesheet's in
#     SITE/hash.txt (`css: HASH`), which the server reads to link them; the
#     server sends them with a year's immutable caching;
#   - the public/ files into SITE.
# A bundle's wasm steps are skipped ("up to date") when it was staged from
# this WASM as it is now (path, time, size) in this mode; a file whose hashed name is already published is not
# compressed again. Release bundles (`opt`) are compressed hardest (brotli
# 11, gzip 9); debug bundles, for the tests, quickly. Files of earlier
# builds (and of bundles no longer built) are removed from SITE/pkg.
# Environment: WASM_BINDGEN (the wasm-bindgen to run: `sb-wasm-bindgen`,
# tools/bindgen, which takes INPUT OUT_DIR NAME), NAME (the stylesheet's
# name, default switchboard), E2E (default end2end).
set -euo pipefail

usage() {
  echo "usage: $0 SITE debug|opt|stage BUNDLE=WASM [BUNDLE=WASM…]" >&2
  exit 2
}
[ $# -ge 3 ] || usage
case $2 in debug | opt | stage) ;; *) usage ;; esac
# Resolve the paths before leaving the caller's directory.
site=$(realpath -m -- "$1")
mode=$2
shift 2
bundles=()
wasms=()
for arg in "$@"; do
  name=${arg%%=*}
  [[ $arg == *=* && $name =~ ^[a-z]+$ ]] || usage
  bundles+=("$name")
  wasms+=("$(realpath -m -- "${arg#*=}")")
done
WASM_BINDGEN=$(realpath -m -- "${WASM_BINDGEN:?set WASM_BINDGEN to sb-wasm-bindgen (make bindgen)}")
cd "$(dirname "$0")/.."

NAME=${NAME:-switchboard}
E2E=${E2E:-end2end}
pkg=$site/pkg
stages=$site.stage

run() {
  echo "$*"
  "$@"
}

if [ "$mode" = opt ]; then
  brotli_level=11 gzip_level=9
else
  brotli_level=4 gzip_level=1
fi
keep=()
# publish FILE NAME EXT: copies FILE to pkg/NAME.HASH.EXT with .br and .gz,
# keeps the three, and leaves HASH in $published.
publish() {
  local file=$1 name=$2 ext=$3 hash target
  hash=$(sha256sum "$file" | cut -c1-16)
  target=$pkg/$name.$hash.$ext
  if [ ! -f "$target.br" ] || [ ! -f "$target.gz" ]; then
    cp "$file" "$target.tmp"
    brotli -f -q "$brotli_level" -o "$target.br" "$target.tmp"
    gzip -c -n "-$gzip_level" "$target.tmp" >"$target.gz"
    mv -f "$target.tmp" "$target"
    echo "published $target ($(stat -c %s "$target") bytes, br $(stat -c %s "$target.br"), gz $(stat -c %s "$target.gz"))"
  fi
  keep+=("$name.$hash.$ext" "$name.$hash.$ext.br" "$name.$hash.$ext.gz")
  published=$hash
}
# write_hashes FILE LINE…: replaces FILE with the lines, all at once.
write_hashes() {
  local file=$1
  shift
  printf '%s\n' "$@" >"$file.tmp"
  mv -f "$file.tmp" "$file"
}

# wasm-opt's flags for the release bundles. `--low-memory-unused` lets it
# fold constants added to addresses into the loads' and stores' offsets
# (0.4-0.7 % of every bundle's brotli): it promises the module never
# touches its first KiB, which sb-wasm-bindgen checks of every module it
# writes (tools/bindgen/layout.rs: data and stack above it).
WASM_OPT_FLAGS=(-Oz --low-memory-unused --enable-bulk-memory --enable-nontrapping-float-to-int)

# stage_bundle BUNDLE WASM: wasm-bindgen's glue and module (with `opt` or
# `stage`, through wasm-opt) in $stages/BUNDLE, unless already newer than WASM.
stage_bundle() {
  local bundle=$1 wasm=$2 stage=$stages/$1 source
  # What the stage was made from: the module's path, time and size, so a
  # stage of another profile's module (make run's, then a bench's) is not
  # taken for this one's, the wasm-bindgen that made it (a new one
  # writes other glue) and wasm-opt's flags.
  source="$wasm $(stat -c '%Y %s' "$wasm") $([ "$mode" = debug ] && echo debug || echo "opt ${WASM_OPT_FLAGS[*]}") $(stat -c '%Y %s' "$WASM_BINDGEN")"
  if [ -f "$stage/${bundle}_bg.wasm" ] && [ "$(cat "$stage/source" 2>/dev/null)" = "$source" ]; then
    echo "browser bundle $bundle up to date"
    return
  fi
  # Built aside and moved in whole, so a failed step leaves no stage that
  # looks up to date.
  rm -rf "$stage.tmp"
  run "$WASM_BINDGEN" "$wasm" "$stage.tmp" "$bundle"
  if [ "$mode" != debug ]; then
    run scripts/wasm-opt/node_modules/.bin/wasm-opt "${WASM_OPT_FLAGS[@]}" \
      -o "$stage.tmp/$bundle.opt.wasm" "$stage.tmp/${bundle}_bg.wasm"
    mv -f "$stage.tmp/$bundle.opt.wasm" "$stage.tmp/${bundle}_bg.wasm"
  fi
  echo "$source" >"$stage.tmp/source"
  rm -rf "$stage"
  mv "$stage.tmp" "$stage"
}

mkdir -p "$pkg" "$stages"
if [ "$mode" = stage ]; then
  if [ ! -x "$WASM_BINDGEN" ] || [ ! -x scripts/wasm-opt/node_modules/.bin/wasm-opt ]; then
    echo "staging skipped: sb-wasm-bindgen or wasm-opt not built yet"
    exit 0
  fi
  for i in "${!bundles[@]}"; do stage_bundle "${bundles[$i]}" "${wasms[$i]}"; done
  exit 0
fi
for i in "${!bundles[@]}"; do
  bundle=${bundles[$i]} wasm=${wasms[$i]} stage=$stages/${bundles[$i]}
  stage_bundle "$bundle" "$wasm"
  publish "$stage/$bundle.js" "$bundle" js
  js=$published
  publish "$stage/${bundle}_bg.wasm" "$bundle" wasm
  write_hashes "$site/hash-$bundle.txt" "js: $js" "wasm: $published"
done
cp style/main.css "$stages/$NAME.css"
publish "$stages/$NAME.css" "$NAME" css
write_hashes "$site/hash.txt" "css: $published"

# Earlier builds' files, and the stages and hash files of bundles no longer
# built (builds before the split staged inside the site, in SITE/stage).
rm -rf "$site/stage"
for f in "$pkg"/*; do
  name=$(basename "$f")
  case " ${keep[*]} " in
    *" $name "*) ;;
    *) rm -f "$f" ;;
  esac
done
for f in "$site"/hash-*.txt "$stages"/*; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  name=${name#hash-}
  name=${name%.txt}
  case " ${bundles[*]} $NAME.css " in
    *" $name "*) ;;
    *) rm -rf "$f" ;;
  esac
done
cp -r public/. "$site/"
