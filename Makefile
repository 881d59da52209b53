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

# The robustness subset of issue 21 (T1 lost updates, T4 etcd follower kill, T9 kubelet restart):
# faults through mkctl chaos, figures printed as FIGURE lines; make test runs the same file.
.PHONY: chaos
chaos: build
	@$(MKCTL) cluster up --nodes $(NODES)
	@set -o pipefail; node scripts/run-tests.mjs e2e robustness.e2e; rc=$$?; $(MKCTL) cluster down; exit $$rc

bench: build
	@for b in bench/*/run.ts; do [ -f "$$b" ] && node --conditions=@mk8s/source --import tsx "$$b"; done

# The docker-compose cluster (docker-compose.yml) brought up, exercised and torn down by its own test (slow).
.PHONY: test-compose
test-compose: build
	MK8S_COMPOSE_TEST=1 node scripts/run-tests.mjs e2e test/e2e/compose.e2e.test.ts
