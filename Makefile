# Switchboard build, run and test.
#
# Two commands do everything on a fresh machine (Debian with rustup and node):
#   make run    installs what is missing, builds release, serves on :3000
#   make test   installs what is missing, runs every check and test
#
# The server builds with the machine's rustup toolchain. The browser bundle is
# built with Debian's rustc-web 1.96, which ships the standard library's source,
# so std is compiled for wasm32 (-Zbuild-std) instead of downloading a target.
#
# The install and bundling steps live in scripts/ (toolchain.sh, e2e-deps.sh,
# bundle.sh); docs/building.md explains the build.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Build outputs live outside the clone so repeated CI runs are incremental.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/switchboard/target
TARGET := $(CARGO_TARGET_DIR)
FRONT_TARGET := $(TARGET)/front
DEB_CARGO := /usr/bin/cargo
DEB_RUSTC := /usr/bin/rustc
CARGO ?= cargo
# Cargo runs that make starts in parallel (make run, make test) do not share
# make's job slots: with them a cargo run took every free slot and make
# could not start the next build (the bundles waited minutes for one). Each
# uses the machine's cores instead, and the kernel shares them out.
OWN_JOBS := env -u MAKEFLAGS -u MFLAGS
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
NAME := switchboard
E2E := end2end
PORT ?= 3000

.PHONY: help run run-cluster bench-cluster test test-postgres host-checks dev toolchain bindgen run-server run-client run-site run-build e2e-deps wasm-opt client-debug client-release server-debug server-release \
        site-debug site-release lint unit e2e client-js-test fmt bench bench-sessions bench-matrix bench-first-load bench-visualiser soak demo demo-vibe demo-chat bench-vibes bench-plugins bench-chat bench-runner bench-ultravox bench-mcp-upstream bench-plugin-client clean-data

help:
	@echo "make run   - build (optimised for a first build) and serve Switchboard at http://127.0.0.1:$(PORT) with demo data"
	@echo "make test  - fmt, clippy (both feature sets), unit + HTTP tests, Playwright end-to-end"
	@echo "make dev   - debug build on :$(PORT), rebuilt and restarted on every save"
	@echo "make run-cluster - make run's build as two instances on a throwaway PostgreSQL behind HAProxy on :$(PORT)"

# ---------------------------------------------------------------- toolchain
# Debian's compiler with std source, lld for wasm, and brotli.
toolchain:
	@SUDO='$(SUDO)' scripts/toolchain.sh

# Chromium for Playwright and the npm packages of the end-to-end suite.
e2e-deps:
	@SUDO='$(SUDO)' E2E='$(E2E)' scripts/e2e-deps.sh

# binaryen's wasm-opt for the release bundles, on its own: `make run`
# installs no browser and no test packages.
wasm-opt:
	@scripts/wasm-opt.sh

# ---------------------------------------------------------------- builds
CLIENT_ENV := RUSTC_BOOTSTRAP=1 RUSTC=$(DEB_RUSTC) CARGO_TARGET_DIR=$(FRONT_TARGET)
CLIENT_ARGS := build --target wasm32-unknown-unknown --no-default-features -Zbuild-std=std,panic_abort
# One browser bundle per group of pages (docs/building.md): the groups are
# Cargo.toml's `all-pages` (`pages-NAME`), each the package bundles/NAME
# linking the library built with that group's islands. One cargo run each:
# run together, cargo would unify their features into one library.
BUNDLES := $(shell sed -n 's/^all-pages = \[\(.*\)\]$$/\1/p' Cargo.toml | tr -d '",' | sed 's/pages-//g')
# The release bundle's size levers (docs/building.md has each one's bytes):
# no panic machinery (a panic aborts at once), no source locations or Debug
# text in the binary, and std built for size. Passed with --config, whose
# arrays cargo appends to .cargo/config.toml's, so the type-erased views set
# there (which server and bundle must share) stay in that one place.
CLIENT_RELEASE_RUSTFLAGS := "-Zunstable-options", "-Cpanic=immediate-abort", "-Zlocation-detail=none", "-Zfmt-debug=none"
CLIENT_RELEASE_ARGS := -Zbuild-std-features=optimize_for_size --config 'build.rustflags = [$(CLIENT_RELEASE_RUSTFLAGS)]' --profile wasm-release

# wasm-bindgen is `sb-wasm-bindgen` (tools/bindgen), built from the library
# the bundles link, at the same version (Cargo.lock): no `cargo install`.
BINDGEN := $(TARGET)/debug/sb-wasm-bindgen
BUNDLE = WASM_BINDGEN='$(BINDGEN)' NAME='$(NAME)' E2E='$(E2E)' scripts/bundle.sh
# bundle-args PROFILE-DIR: the NAME=WASM arguments of scripts/bundle.sh.
bundle-args = $(foreach b,$(BUNDLES),$(b)=$(FRONT_TARGET)/wasm32-unknown-unknown/$(1)/bundle_$(b).wasm)

# BUILD_BUNDLES: the bundles to compile (make dev passes the changed ones);
# every bundle is still published (an unchanged one is skipped quickly).
BUILD_BUNDLES ?= $(BUNDLES)

bindgen:
	$(OWN_JOBS) $(CARGO) build -p switchboard-bindgen

client-debug: toolchain bindgen
	for b in $(BUILD_BUNDLES); do $(OWN_JOBS) $(CLIENT_ENV) $(DEB_CARGO) $(CLIENT_ARGS) -p bundle-$$b; done
	$(BUNDLE) $(TARGET)/site-debug debug $(call bundle-args,debug)

client-release: toolchain wasm-opt bindgen
	for b in $(BUNDLES); do $(CLIENT_ENV) $(DEB_CARGO) $(CLIENT_ARGS) $(CLIENT_RELEASE_ARGS) -p bundle-$$b; done
	$(BUNDLE) $(TARGET)/site-release opt $(call bundle-args,wasm-release)

# The app and the scripted model the workflow chat's end-to-end tests talk to.
server-debug:
	$(OWN_JOBS) $(CARGO) build --bin $(NAME) --bin scripted-model --features ssr

server-release:
	$(CARGO) build --release --bin $(NAME) --features ssr

# ---------------------------------------------------------------- make run's build
# Tuned for a fresh machine's first build (docs/building.md has the
# minutes): the profiles `serve` (the server) and `wasm-run` (the bundles)
# trade a little speed and size for build time; benches keep `release` and
# `wasm-release`. The server (with sb-wasm-bindgen) needs only the machine's
# cargo, so it starts at once; the bundles' compiler comes from apt.
RUN_JOBS ?= 3
SERVE_PROFILE ?= serve
WASM_RUN_PROFILE ?= wasm-run
run-build run-server run-client run-site: BINDGEN = $(TARGET)/$(SERVE_PROFILE)/sb-wasm-bindgen

run-server:
	$(OWN_JOBS) $(CARGO) build --profile $(SERVE_PROFILE) -p switchboard -p switchboard-bindgen \
		--features switchboard/ssr --bin $(NAME) --bin sb-wasm-bindgen

# Each bundle is staged (wasm-bindgen, wasm-opt) beside the next one's build
# (once sb-wasm-bindgen is built; the last step stages what is left).
run-client: toolchain wasm-opt
	for b in $(BUNDLES); do $(OWN_JOBS) $(CLIENT_ENV) $(DEB_CARGO) $(CLIENT_ARGS) -Zbuild-std-features=optimize_for_size \
		--config 'build.rustflags = [$(CLIENT_RELEASE_RUSTFLAGS)]' --profile $(WASM_RUN_PROFILE) -p bundle-$$b; \
		$(BUNDLE) $(TARGET)/site-release stage $$b=$(FRONT_TARGET)/wasm32-unknown-unknown/$(WASM_RUN_PROFILE)/bundle_$$b.wasm & \
	done; wait

run-site: run-client run-server
	$(BUNDLE) $(TARGET)/site-release opt $(call bundle-args,$(WASM_RUN_PROFILE))

run-build:
	+@$(MAKE) --no-print-directory -j$(RUN_JOBS) run-site

# ---------------------------------------------------------------- the two commands
run: run-build
	@mkdir -p data
	SITE_ROOT=$(TARGET)/site-release PORT=$(PORT) $(TARGET)/$(SERVE_PROFILE)/$(NAME)

# Several instances for a newcomer to try (deploy/README.md): make run's
# build, twice on a throwaway PostgreSQL, behind HAProxy on :$(PORT);
# Ctrl-C stops it all and the database goes with it (scripts/run-cluster.sh).
run-cluster: run-build
	@SUDO='$(SUDO)' BIN=$(TARGET)/$(SERVE_PROFILE)/$(NAME) SITE_ROOT=$(TARGET)/site-release PORT=$(PORT) \
		scripts/run-cluster.sh

# The browser bundles build with Debian's cargo in their own target directory,
# so they compile beside the checks and the server (whose cargo runs take
# turns on one directory).
TEST_JOBS ?= 2
test: toolchain e2e-deps
	+@$(MAKE) --no-print-directory -j$(TEST_JOBS) host-checks client-debug client-js-test
	@$(MAKE) --no-print-directory e2e

# fmt, clippy, the unit and HTTP tests (on SQLite, then again on a
# throwaway PostgreSQL), then the server the specs run.
host-checks:
	+@$(MAKE) --no-print-directory lint && $(MAKE) --no-print-directory unit \
		&& $(MAKE) --no-print-directory test-postgres && $(MAKE) --no-print-directory server-debug

# The edit-and-reload loop (debug build on :$(PORT)): on every save, rebuild
# the server and the bundles whose pages changed, and restart (scripts/dev.sh).
dev: toolchain
	@SUDO='$(SUDO)' PORT=$(PORT) scripts/dev.sh

# ---------------------------------------------------------------- test steps
lint:
	$(CARGO) fmt --all -- --check
	$(OWN_JOBS) $(CARGO) clippy --all-targets --features ssr -- -D warnings
	$(OWN_JOBS) $(CARGO) clippy --lib --no-default-features --features hydrate,all-pages -- -D warnings
	$(OWN_JOBS) $(CARGO) clippy -p switchboard-bindgen --all-targets -- -D warnings

unit:
	$(OWN_JOBS) $(CARGO) test --features ssr
	$(OWN_JOBS) $(CARGO) test -p switchboard-bindgen

# The HTTP suite and the schema parity check on PostgreSQL, against a
# throwaway server (scripts/pg.sh) in a temporary folder, stopped whatever
# the outcome. Each spawned app gets a database of its own on it, dropped
# in batches as tests end (tests/api/helpers.rs). When the tests fail, the server's log is printed
# before the folder goes: what the server said is often the cause.
test-postgres:
	@pg=$$(mktemp -d); trap 'scripts/pg.sh stop "$$pg"' EXIT; trap 'exit 130' INT TERM; \
	url=$$(SUDO='$(SUDO)' scripts/pg.sh start "$$pg"); echo "PostgreSQL for the tests: $$url"; \
	TEST_POSTGRES_URL="$$url" $(OWN_JOBS) $(CARGO) test --features ssr --test api --test schema_parity \
		|| { status=$$?; echo "--- the PostgreSQL server's errors ($$pg/server.log):"; \
		     { grep -E 'PANIC|FATAL|ERROR|could not' "$$pg/server.log" | tail -n 40; } || true; \
		     echo "--- its last lines:"; tail -n 20 "$$pg/server.log" || true; df -h "$$pg" || true; exit $$status; }

# The JavaScript plugin client (clients/js): its unit tests on node's own
# runner, and tsc (end2end's devDependency, installed by e2e-deps) checking
# the module against its hand-written types.
client-js-test: e2e-deps
	node --test clients/js/test/
	$(E2E)/node_modules/.bin/tsc -p clients/js

e2e:
	cd $(E2E) && SWITCHBOARD_BIN=$(TARGET)/debug/$(NAME) SCRIPTED_MODEL_BIN=$(TARGET)/debug/scripted-model \
		SITE_ROOT=$(TARGET)/site-debug npx playwright test

# Plays a scripted banking call against a running server (see scripts/demo.py).
demo:
	python3 scripts/demo.py

# The Todo Assistant vibe: agent switches and refusals (needs SWITCHBOARD_API_KEY).
demo-vibe:
	python3 scripts/demo_vibe.py

# The workflow agent with no hosted model: the app on :$(PORT) talking to
# the scripted OpenAI-compatible model (scripts/model-script.json) on :3999.
# Open /workflows/banking-master as the admin and ask "Add a custom_agent
# step called Verify identity with perform_idv_check".
demo-chat: client-release
	$(CARGO) build --release --bin $(NAME) --bin scripted-model --features ssr
	@mkdir -p data
	$(TARGET)/release/scripted-model --port 3999 & trap 'kill $$!' EXIT; \
	SITE_ROOT=$(TARGET)/site-release PORT=$(PORT) \
	SWITCHBOARD_LLM_BASE_URL=http://127.0.0.1:3999/v1 SWITCHBOARD_LLM_API_KEY=scripted SWITCHBOARD_LLM_MODEL=scripted \
	$(TARGET)/release/$(NAME)

# Criterion benchmarks (release profile); figures in
# $(CARGO_TARGET_DIR)/criterion. What each bench measures: benches/README.md.
bench:
	$(CARGO) bench --features ssr --bench prompt --bench bindings

# Tool-call round trip and SSE fan-out (1,000 and 10,000 subscribers), each
# fan-out also through the plain Node relay and a minimal tokio relay in
# benches/peers/, side by side, under one probe (benches/sessions/probe.rs).
bench-sessions:
	ulimit -n $$(ulimit -Hn) && $(CARGO) bench --features ssr --bench sessions

# Two instances on a throwaway PostgreSQL against one on SQLite, in one run:
# SSE fan-out with the watchers split over the two (p50, p99, RSS per
# instance) and tool calls per second through HAProxy (deploy/haproxy.cfg).
bench-cluster:
	@command -v haproxy >/dev/null || $(SUDO) apt-get install -y haproxy
	@pg=$$(mktemp -d); trap 'scripts/pg.sh stop "$$pg"' EXIT; trap 'exit 130' INT TERM; \
	url=$$(SUDO='$(SUDO)' scripts/pg.sh start "$$pg"); \
	ulimit -n $$(ulimit -Hn) && BENCH_POSTGRES_URL="$$url" $(CARGO) bench --features ssr --bench cluster

# Agents and vibes: the stage-change payload (Criterion) and the switchAgent
# HTTP round trip against the release server (median, p99).
bench-vibes:
	$(CARGO) bench --features ssr --bench vibes

# Plugin tools: registering 1,000 tools and a relayed call round trip,
# over HTTP against the release server.
bench-plugins:
	$(CARGO) bench --features ssr --bench plugins

# The agent runner: its server-side cost per step excluding the model's
# time, against the release server with the scripted model.
bench-runner:
	$(CARGO) bench --features ssr --bench runner

bench-chat:
	$(CARGO) bench --features ssr --bench workflow_chat

# The Ultravox door's overhead: the same tool through
# POST …/ultravox/tools/{tool} and POST …/tool-calls, side by side,
# against the release server.
bench-ultravox:
	$(CARGO) bench --features ssr --bench ultravox

# A call forwarded to a connected MCP server: the same upstream `echo`
# directly, through the session's MCP endpoint and through REST, paired,
# against the release server (medians, p99s, per-round differences).
bench-mcp-upstream:
	$(CARGO) bench --features ssr --bench mcp_upstream

# Reliability soak against the release server (not part of `make test`):
# 1,000 watchers, 200 tool calls/s over 50 sessions, session churn and 1,000
# forced disconnects with resumes for SOAK_SECONDS (60); fails on any error,
# lost event or >10 % RSS growth. Knobs: benches/README.md.
soak:
	ulimit -n $$(ulimit -Hn) && $(CARGO) bench --features ssr --bench soak

# Click latency of the bindings matrix at 30 x 100, in Chromium (release build).
bench-matrix: e2e-deps client-release server-release
	cd $(E2E) && SWITCHBOARD_BIN=$(TARGET)/release/$(NAME) SITE_ROOT=$(TARGET)/site-release node bench/matrix.mjs

# First and second visit to a lesson editor: bytes over the wire per file,
# bundle sizes (raw / gzip / brotli), time to hydration.
bench-first-load: e2e-deps client-release server-release
	cd $(E2E) && SWITCHBOARD_BIN=$(TARGET)/release/$(NAME) SITE_ROOT=$(TARGET)/site-release node bench/first_load.mjs

# Tool call -> visualiser DOM update (timeline entry, workflow switch) in
# Chromium: median, p95, max (release build).
bench-visualiser: e2e-deps client-release server-release
	cd $(E2E) && SWITCHBOARD_BIN=$(TARGET)/release/$(NAME) SITE_ROOT=$(TARGET)/site-release node bench/visualiser.mjs

# A call relayed to a plugin page on another origin through the served
# JavaScript client (clients/js): the agent's round trip, median and p95.
# The page needs no bundle: only the release server is built.
bench-plugin-client: e2e-deps server-release
	cd $(E2E) && SWITCHBOARD_BIN=$(TARGET)/release/$(NAME) SITE_ROOT=$(TARGET)/site-release node bench/plugin_client.mjs

fmt:
	$(CARGO) fmt --all

clean-data:
	rm -rf data
