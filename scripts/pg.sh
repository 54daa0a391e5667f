#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests and `make run-cluster`, from the
# machine's Debian packages: no server to set up, nothing left behind.
#
#   scripts/pg.sh start DIR   a new server in DIR (made if missing) on a free
#                             port of 127.0.0.1; prints its admin URL,
#                             postgres://postgres@127.0.0.1:PORT/postgres,
#                             and writes it to DIR/url
#   scripts/pg.sh stop DIR    stops it and removes DIR
#
# Both are idempotent: starting a running server prints its URL again,
# stopping one that is gone does nothing. Quiet on success (the URL is the
# only output); on failure the server's log says why.
#
# initdb refuses to run as root, so as root (CI) the server runs as the
# `postgres` user, DIR handed to it; as anyone else it runs as that user.
# The superuser is `postgres` either way, with trust auth: it listens on
# 127.0.0.1 and a socket in DIR only. The postgresql package is installed
# with apt-get where initdb is missing.
#
# Environment: PG_FSYNC (default off: a test server loses nothing worth
# keeping in a crash, and fsync is most of a test write's time),
# PG_MAX_CONNECTIONS (default 300: the HTTP suite runs many apps at once,
# each with its own pool), SUDO (see lib.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

die() { echo "scripts/pg.sh: $*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: scripts/pg.sh start|stop DIR"
action="$1"
dir="$2"
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
dir="${dir%/}"
[ -n "$dir" ] && [ "$dir" != / ] || die "DIR must not be /"
# The socket folder is a server option, split on spaces.
case "$dir" in *[[:space:]]*) die "DIR must not contain spaces: $dir" ;; esac
# The server's user may not be able to enter the caller's folder.
cd /

pg_bin() {
  local bin
  bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    apt_install postgresql >&2
    bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    [ -n "$bin" ] && [ -x "$bin/initdb" ] || die "no initdb after installing postgresql"
  fi
  echo "$bin"
}

# Runs a PostgreSQL program as the server's user.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

running() { [ -f "$dir/data/postmaster.pid" ] && as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; }

# A port nothing answers on; start retries with another if it is taken
# between this check and the server binding it.
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  die "no free port found"
}

init() {
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "no postgres user (is the postgresql package installed?)"
    chown postgres: "$dir"
    chmod 700 "$dir"
    runuser -u postgres -- test -w "$dir" \
      || die "$dir is not reachable by the postgres user (a folder above it is closed to it)"
  fi
  # C locale: text sorts byte by byte, as on SQLite.
  as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
}

start() {
  bin="$(pg_bin)"
  if running; then
    cat "$dir/url"
    return
  fi
  [ -f "$dir/data/PG_VERSION" ] || init
  local port url fsync="${PG_FSYNC:-off}"
  for _ in 1 2 3 4 5; do
    port="$(free_port)"
    if as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -s \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=$fsync \
          -c synchronous_commit=$fsync -c full_page_writes=$fsync \
          -c max_connections=${PG_MAX_CONNECTIONS:-300}" start >/dev/null 2>&1; then
      break
    fi
    port=""
  done
  if [ -z "$port" ]; then
    tail -n 20 "$dir/server.log" >&2 2>/dev/null || true
    die "the server did not start (log: $dir/server.log)"
  fi
  for _ in $(seq 60); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres && break
    sleep 0.5
  done
  "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres || die "the server on port $port is not ready (log: $dir/server.log)"
  url="postgres://postgres@127.0.0.1:$port/postgres"
  echo "$url" >"$dir/url"
  echo "$url"
}

stop() {
  [ -e "$dir" ] || return 0
  # Only a folder this script made (or an empty one) is removed.
  [ -f "$dir/url" ] || [ -d "$dir/data" ] || [ -z "$(ls -A "$dir")" ] \
    || die "$dir does not hold a server started by scripts/pg.sh; not removing it"
  if [ -f "$dir/data/postmaster.pid" ]; then
    bin="$(pg_bin)"
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 -s stop >/dev/null 2>&1 \
      || ! running || die "the server in $dir did not stop (log: $dir/server.log)"
  fi
  rm -rf "$dir"
}

case "$action" in
  start) start ;;
  stop) stop ;;
  *) die "usage: scripts/pg.sh start|stop DIR" ;;
esac
