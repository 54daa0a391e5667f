#!/usr/bin/env bash
# `make dev`: the edit-and-reload loop. Builds the debug app once, serves it
# on $PORT, and on every save under src/, style/, public/, migrations/ or
# bundles/ rebuilds what the change needs and restarts the server:
#   - the server always (it renders every page);
#   - the browser bundles whose pages changed: a file of one group of pages
#     (src/ui/<folder>/, see ui/mod.rs's `pages-*` gates) rebuilds that
#     group's bundle, a server-only file (src/server/, migrations/, app.rs,
#     startup.rs, main.rs, src/bin/) none, anything else the browser
#     compiles (domain/, api/, error.rs, ui/components, …) every bundle.
# Watching is Debian's `entr` (installed if missing); new files are picked
# up by restarting the watch. Environment: PORT (3000), SUDO, CARGO.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/switchboard/target}

if [ "${1:-}" = step ]; then
  # One round, run by entr with the first changed file (entr kills the
  # previous round's server first).
  changed=${2:-}
  changed=${changed#"$PWD/"}
  case "$changed" in
    src/ui/accounts* | src/ui/home* | src/ui/login* | src/ui/lessons/list* | src/ui/lessons/runs*) bundles=start ;;
    src/ui/lessons/*) bundles="start editor" ;;
    src/ui/sessions/*) bundles=sessions ;;
    src/ui/agents/* | src/ui/bindings/*) bundles=admin ;;
    src/ui/playground/* | src/ui/workflows/*) bundles=workflows ;;
    src/server/* | src/bin/* | src/app.rs | src/startup.rs | src/main.rs | migrations/*) bundles= ;;
    "") bundles= ;;
    *) bundles=all ;;
  esac
  built=$CARGO_TARGET_DIR/debug/switchboard
  if [ -n "$changed" ] && [ -e "$changed" ] && [ "$changed" -nt "$built" ]; then
    echo "dev: $changed changed; rebuilding the server${bundles:+ and bundles: $bundles}"
    if [ "$bundles" = all ]; then
      make --no-print-directory client-debug
    elif [ -n "$bundles" ]; then
      make --no-print-directory client-debug BUILD_BUNDLES="$bundles"
    fi
    make --no-print-directory server-debug || { echo "dev: build failed; fix and save again"; exit 0; }
  fi
  mkdir -p data
  SITE_ROOT=$CARGO_TARGET_DIR/site-debug exec "$built"
fi

if ! command -v entr >/dev/null; then
  echo "Installing Debian entr (file watcher for make dev)"
  apt_install entr
fi
make --no-print-directory client-debug server-debug
while true; do
  # -d: stop when a file is added to a watched folder, so it is watched
  # too; -r: restart the server after each round's build.
  git ls-files -co --exclude-standard src style public migrations bundles Cargo.toml |
    entr -d -r -n scripts/dev.sh step /_ || true
done
