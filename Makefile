# Switchboard build, run and test.
#
# Two commands do everything on a fresh machine (Debian with rustup and node):
#   make run    installs what is missing, builds release, serves on :3000
#   make test   installs what is missing, runs every check and test
#
# The server builds with the machine's rustup toolchain. The browser bundle is
# built with Debian's rustc-web 1.96, which ships the standard library's source,
# so std is compiled for wasm32 (-Zbuild-std) instead of downloading a target.

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
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
NAME := switchboard
APT_PACKAGES := rustc-web cargo-web rust-web-src lld-22
WBG_VERSION = $(shell awk '/^name = "wasm-bindgen"$$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
E2E := end2end
PORT ?= 3000

.PHONY: help run test toolchain e2e-deps client-debug client-release server-debug server-release \
        site-debug site-release lint unit e2e fmt bench bench-sessions bench-matrix demo clean-data

help:
	@echo "make run   - build (release) and serve Switchboard at http://127.0.0.1:$(PORT) with demo data"
	@echo "make test  - fmt, clippy (both feature sets), unit + HTTP tests, Playwright end-to-end"

# ---------------------------------------------------------------- toolchain
# Debian's compiler with std source, lld for wasm, and wasm-bindgen-cli at the
# exact version in Cargo.lock (the CLI and the library must match).
toolchain:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi
	@if [ "$$(wasm-bindgen --version 2>/dev/null | awk '{print $$2}')" != "$(WBG_VERSION)" ]; then \
	  echo "Installing wasm-bindgen-cli $(WBG_VERSION) (takes several minutes, once per machine)"; \
	  $(CARGO) install wasm-bindgen-cli --version $(WBG_VERSION) --force; \
	fi

# Chromium for Playwright and the npm packages of the end-to-end suite (also
# binaryen's wasm-opt for the release bundle).
e2e-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "Installing Debian chromium"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	fi
	@if [ ! -f $(E2E)/node_modules/.package-lock.json ] || [ $(E2E)/package-lock.json -nt $(E2E)/node_modules/.package-lock.json ]; then \
	  cd $(E2E) && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund; \
	fi

# ---------------------------------------------------------------- builds
CLIENT_ENV := RUSTC_BOOTSTRAP=1 RUSTC=$(DEB_RUSTC) CARGO_TARGET_DIR=$(FRONT_TARGET)
CLIENT_ARGS := build --lib --target wasm32-unknown-unknown --no-default-features --features hydrate -Zbuild-std=std,panic_abort

client-debug: toolchain
	$(CLIENT_ENV) $(DEB_CARGO) $(CLIENT_ARGS)
	$(MAKE) --no-print-directory bundle WASM=$(FRONT_TARGET)/wasm32-unknown-unknown/debug/$(NAME).wasm SITE=$(TARGET)/site-debug

client-release: toolchain e2e-deps
	$(CLIENT_ENV) $(DEB_CARGO) $(CLIENT_ARGS) --profile wasm-release
	$(MAKE) --no-print-directory bundle WASM=$(FRONT_TARGET)/wasm32-unknown-unknown/wasm-release/$(NAME).wasm SITE=$(TARGET)/site-release OPT=1

# wasm-bindgen glue (pkg/NAME.js + pkg/NAME_bg.wasm, the names Leptos'
# hydration script loads) + stylesheet + public files -> $(SITE)
.PHONY: bundle
bundle:
	mkdir -p $(SITE)/pkg
	if [ -f $(SITE)/pkg/$(NAME)_bg.wasm ] && [ $(SITE)/pkg/$(NAME)_bg.wasm -nt $(WASM) ]; then \
	  echo "browser bundle up to date"; \
	else \
	  wasm-bindgen --target web --no-typescript --out-name $(NAME) --out-dir $(SITE)/pkg $(WASM); \
	  if [ -n "$(OPT)" ]; then \
	    $(E2E)/node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
	      -o $(SITE)/pkg/$(NAME).opt.wasm $(SITE)/pkg/$(NAME)_bg.wasm && mv -f $(SITE)/pkg/$(NAME).opt.wasm $(SITE)/pkg/$(NAME)_bg.wasm; \
	  fi; \
	fi
	cp style/main.css $(SITE)/pkg/$(NAME).css
	cp -r public/. $(SITE)/

server-debug:
	$(CARGO) build --bin $(NAME) --features ssr

server-release:
	$(CARGO) build --release --bin $(NAME) --features ssr

# ---------------------------------------------------------------- the two commands
run: client-release server-release
	@mkdir -p data
	SITE_ROOT=$(TARGET)/site-release PORT=$(PORT) $(TARGET)/release/$(NAME)

test: toolchain e2e-deps lint unit client-debug server-debug e2e

# ---------------------------------------------------------------- test steps
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets --features ssr -- -D warnings
	$(CARGO) clippy --lib --no-default-features --features hydrate -- -D warnings

unit:
	$(CARGO) test --features ssr

e2e:
	cd $(E2E) && SWITCHBOARD_BIN=$(TARGET)/debug/$(NAME) SITE_ROOT=$(TARGET)/site-debug npx playwright test

# Plays a scripted banking call against a running server (see scripts/demo.py).
demo:
	python3 scripts/demo.py

# Criterion benchmarks (release profile); figures in target/criterion.
bench:
	$(CARGO) bench --features ssr --bench prompt --bench bindings

# Tool-call round trip and SSE fan-out (1,000 and 10,000 subscribers).
bench-sessions:
	ulimit -n $$(ulimit -Hn) && $(CARGO) bench --features ssr --bench sessions

# Click latency of the bindings matrix at 30 x 100, in Chromium (release build).
bench-matrix: client-release server-release
	cd $(E2E) && SWITCHBOARD_BIN=$(TARGET)/release/$(NAME) SITE_ROOT=$(TARGET)/site-release node bench/matrix.mjs

fmt:
	$(CARGO) fmt --all

clean-data:
	rm -rf data
