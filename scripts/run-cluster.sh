#!/usr/bin/env bash
# `make run-cluster`: Switchboard the way an operator with several instances
# runs it, on one machine: a throwaway PostgreSQL (scripts/pg.sh), two
# instances of the server on one database there, and HAProxy in front
# (deploy/haproxy.cfg) on PORT. Ctrl-C, or either instance stopping, stops
# everything, PostgreSQL (and its data) included.
#
# The first instance starts alone and seeds the new database (the demo
# accounts, whose passwords it prints, and the demo lessons, as `make run`);
# the second starts once the first answers its health check.
#
# Environment (the Makefile passes them): BIN (the server binary),
# SITE_ROOT (the built site), PORT (default 3000), INSTANCE_PORTS (the
# instances' own ports, default "3101 3102"), SUDO (see lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

die() { echo "run-cluster: $*" >&2; exit 1; }

: "${BIN:?BIN must name the server binary}"
: "${SITE_ROOT:?SITE_ROOT must name the built site}"
[ -x "$BIN" ] || die "no server at $BIN (make run-cluster builds it)"
port="${PORT:-3000}"
read -ra instance_ports <<<"${INSTANCE_PORTS:-3101 3102}"
[ "${#instance_ports[@]}" = 2 ] || die "INSTANCE_PORTS must name two ports (deploy/haproxy.cfg has two servers)"

haproxy_bin="$(command -v haproxy || echo /usr/sbin/haproxy)"
if [ ! -x "$haproxy_bin" ]; then
  echo "Installing Debian packages: haproxy"
  apt_install haproxy
  haproxy_bin=/usr/sbin/haproxy
fi

# Answers 0 when the instance on port $1 says 200 to GET /healthz.
healthy() {
  curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/healthz" 2>/dev/null
}

pg_dir="$(mktemp -d)"
pids=()
stop_all() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  scripts/pg.sh stop "$pg_dir"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

admin_url="$(scripts/pg.sh start "$pg_dir")"
psql_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)/psql"
"$psql_bin" "$admin_url" -qc 'CREATE DATABASE switchboard' >/dev/null
database_url="${admin_url%/postgres}/switchboard"

# Starts an instance on port $1, its log lines prefixed with the port.
start_instance() {
  DATABASE_URL="$database_url" HOST=127.0.0.1 PORT="$1" SITE_ROOT="$SITE_ROOT" \
    TRUSTED_PROXIES=127.0.0.1 \
    "$BIN" > >(sed -u "s/^/[:$1] /") 2>&1 &
  pids+=("$!")
  local pid="$!"
  for _ in $(seq 120); do
    healthy "$1" && return
    kill -0 "$pid" 2>/dev/null || die "the instance on port $1 stopped while starting (its log is above)"
    sleep 0.5
  done
  die "the instance on port $1 did not answer /healthz within 60 s"
}

for p in "${instance_ports[@]}"; do start_instance "$p"; done

# Each watcher is a connection (two descriptors for HAProxy).
ulimit -n "$(ulimit -Hn)"
SB_BIND="127.0.0.1:$port" SB_APP1="127.0.0.1:${instance_ports[0]}" SB_APP2="127.0.0.1:${instance_ports[1]}" \
  "$haproxy_bin" -W -db -f deploy/haproxy.cfg &
pids+=("$!")
for _ in $(seq 40); do
  healthy "$port" && break
  kill -0 "${pids[-1]}" 2>/dev/null || die "haproxy stopped while starting (its log is above)"
  sleep 0.25
done
healthy "$port" || die "haproxy on port $port does not reach the instances"

echo
echo "Switchboard on http://127.0.0.1:$port (HAProxy over the instances on ports ${instance_ports[*]},"
echo "sharing $database_url). Ctrl-C stops everything; the database goes with it."

# The first of them to stop ends the demo.
set +e
wait -n "${pids[@]}"
status=$?
set -e
echo "run-cluster: a process stopped (status $status); stopping the rest" >&2
exit "$status"
