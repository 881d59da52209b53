# mk8s: `make up` starts a whole local cluster; `make test` runs every test. Both install what is missing.
SHELL := /bin/bash
MKCTL := node mkctl/dist/main.js
NODES ?= 2
export NODES

.PHONY: deps build images up down clean status test test-unit test-int test-e2e bench

deps:
	@bash scripts/setup.sh

build: deps
	@echo "build: tsc -b"; npx tsc -b
	@node dashboard/dist/build-app.js
	@bash images/build.sh

up: build
	@bash scripts/install-mkctl.sh
	@$(MKCTL) cluster up --nodes $(NODES)

down:
	@if [ -f mkctl/dist/main.js ]; then $(MKCTL) cluster down; fi

status:
	@$(MKCTL) cluster status

clean:
	@if [ -f mkctl/dist/main.js ]; then $(MKCTL) cluster down --purge; fi
	@rm -rf .mk8s */dist */*.tsbuildinfo

test-unit: build
	node scripts/run-tests.mjs unit

test-int: build
	node scripts/run-tests.mjs int

test-e2e: build
	@$(MKCTL) cluster up --nodes $(NODES)
	@set -o pipefail; node scripts/run-tests.mjs e2e; rc=$$?; $(MKCTL) cluster down; exit $$rc

test: build
	@rc=0; \
	node scripts/run-tests.mjs unit || rc=1; \
	node scripts/run-tests.mjs int || rc=1; \
	$(MKCTL) cluster up --nodes $(NODES) && { node scripts/run-tests.mjs e2e || rc=1; } || rc=1; \
	$(MKCTL) cluster down || rc=1; \
	exit $$rc

# The robustness suite of issue 21 on a fresh 3-node cluster: test/e2e/robustness.e2e.test.ts (the
# subset make test runs: T1, T4 follower, T9) and test/chaos/**/*.chaos.test.ts (T2, T3, T4 leader,
# T5, T13, ...), every FIGURE line summarised with its goal; non-zero when a goal is missed.
# Bounded (CHAOS_TIMEOUT_S, default 2400 s of tests); the cluster is brought down in every case.
# CHAOS_UP_FLAGS adds cluster up flags; `make chaos CHAOS_FILTER=t3` runs one test file.
.PHONY: chaos
chaos: build
	@NODES=$${CHAOS_NODES:-3} node scripts/chaos.mjs $(CHAOS_FILTER)

bench: build
	@for b in bench/*/run.ts; do [ -f "$$b" ] && node --conditions=@mk8s/source --import tsx "$$b"; done

# The docker-compose cluster (docker-compose.yml) brought up, exercised and torn down by its own test (slow).
.PHONY: test-compose
test-compose: build
	MK8S_COMPOSE_TEST=1 node scripts/run-tests.mjs e2e test/e2e/compose.e2e.test.ts
