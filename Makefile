# Kernodeck: `make run` runs the whole system, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PACKAGES := libs/contracts libs/chains 'libs/kit[service]' libs/resources services/catalog services/accounts services/orders services/payments services/chain-watchers services/provisioning services/notify services/support gateway admin
PYPROJECTS := $(wildcard libs/*/pyproject.toml services/*/pyproject.toml gateway/pyproject.toml admin/pyproject.toml)
# The venv is current while what it was installed from is the same: named by its content, not its files' times
# (a checkout or a rebase that changes no dependency installs nothing).
STAMP := $(VENV)/.installed-$(shell cat $(PYPROJECTS) requirements-dev.lock | sha256sum | cut -c1-16)

.PHONY: install lock web run test test-unit test-services test-http test-browser test-faults lint bench clean \
	unit-green unit-async services-nodes services-services services-flows http-fuzz http-payments http-rest

# Every third-party package at the version and with the hashes requirements-dev.lock pins (`make lock` makes it
# from the pyproject.toml files and requirements-dev.txt: infra/lib/lock.sh); then our packages, editable,
# built with the venv's own setuptools (no isolated build environment per package: 14 of them took minutes,
# this a few seconds) and nothing else (their dependencies are all in the lock; pip check says so).
$(STAMP):
	test -x $(BIN)/python || { infra/local/install.sh venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/pip install -q --require-hashes -r requirements-dev.lock
	$(BIN)/pip install -q --no-deps --no-build-isolation $(addprefix -e ,$(PACKAGES))
	$(BIN)/pip check
	rm -f $(VENV)/.installed*
	touch $@

install: $(STAMP)

# The locks again, after a pyproject.toml or requirements-dev.txt changed (UPGRADE=1: every package at its newest
# allowed version).
lock: install
	KERNODECK_PACKAGES="$(PACKAGES)" infra/lib/lock.sh

# The web frontend: its tools from the npm registry (web/package-lock.json), built into web/dist, which the
# gateway serves at /. Node.js and npm come from Debian (infra/web/install.sh).
WEB_STAMP := web/node_modules/.installed
WEB_SOURCES := $(shell find web/src -type f) web/build.mjs web/tsconfig.json

$(WEB_STAMP): web/package.json web/package-lock.json
	infra/web/install.sh
	rm -rf web/node_modules  # npm ci starts from nothing anyway; its own removal can fail on overlay filesystems
	cd web && npm ci --no-audit --no-fund --loglevel=error
	touch $@

web/dist/index.html: $(WEB_STAMP) $(WEB_SOURCES)
	cd web && npm run --silent build

web: web/dist/index.html

# run.py installs the local chain nodes (infra/devnet/install.sh) when it starts them, as it does while
# KERNODECK_LOCAL_CHAINS is on (the default). A node that cannot be installed is skipped, its payment methods off.
# The web frontend builds beside the starting system (infra/web/build.sh: make web, and its failure's reason
# where the gateway shows it); the gateway serves it once it is built.
run: install
	infra/local/install.sh broker
	infra/web/build.sh & $(BIN)/python infra/local/run.py

# The tests in lanes (README: Test). First, before the broker, the database and the web build are prepared, the
# fast lane, `make test-unit`: the tests marked `unit` (domain and use cases on memory units), whose plugin
# fails one that reaches for the broker, a database or a process of its own; under a minute. Then the rest, each lane in parallel pytest processes ("shards": each a session of
# its own, with its own databases, vhosts, nodes and stacks, on free ports and test-host slots) that take about
# as long as each other: services and the kit under eventlet (the kit's pytest plugin patches first); the
# gateway, notify (an asyncio process) and the end-to-end tests under asyncio, each end-to-end shard on its own
# stack; the browser and the fault suites, each on its stack.
PYTEST := $(BIN)/python -m pytest
GREEN := $(PYTEST) -p kernodeck_kit.testing -m "not unit"
ASYNC := $(PYTEST) -p no:pytest_nameko -m "not unit"
UNIT_FILES = $(shell grep -rlw --include='test_*.py' 'pytest.mark.unit' libs services gateway admin infra tests)
ASYNC_DIRS := gateway/% services/notify/% admin/% infra/% tests/e2e/% tests/browser/% tests/faults/% tests/test_%
LANES := --no-print-directory --output-sync=target
# Shards of a lane at once; `make test LANE_JOBS=1` runs them one after the other (on a machine busy with other
# work, where parallel shards only share the same CPUs).
LANE_JOBS ?= 3
# `make test` runs every shard of every lane in one pool, TEST_JOBS at once, the longest first: a quarter of the
# machine's CPU stood idle while each lane waited for its slowest shard and the fault and browser suites ran
# alone. The faults come first: they mostly wait on the processes they stop and start, and beside the others
# they take longest. The web build runs beside the first shards, which do not need it.
TEST_JOBS ?= 4
SHARDS := test-faults http-rest services-flows services-nodes services-services http-payments http-fuzz test-browser

test: install
	$(MAKE) --no-print-directory lint test-unit
	infra/test/prepare.sh
	$(MAKE) $(LANES) -j$(TEST_JOBS) $(SHARDS)

UNIT := $(PYTEST) -p kernodeck_kit.unit_lane -p no:pytest_nameko -m unit

test-unit: install
	$(MAKE) $(LANES) -j$(LANE_JOBS) unit-green unit-async

unit-green:
	$(UNIT) $(filter-out $(ASYNC_DIRS),$(UNIT_FILES))

unit-async:  # a process of its own, as in the other lanes: eventlet's patching must not reach asyncio
	$(UNIT) $(filter $(ASYNC_DIRS),$(UNIT_FILES))

test-services:
	$(MAKE) $(LANES) -j$(LANE_JOBS) services-nodes services-services services-flows

services-nodes:  # the kit, the libraries, and the payment flows on real chain nodes
	$(GREEN) libs tests/integration/chain_payments

services-services:
	$(GREEN) services --ignore=services/notify --ignore=services/chain-watchers

services-flows:  # the flows across services, and the chain watchers on their nodes
	$(GREEN) tests/integration services/chain-watchers --ignore=tests/integration/chain_payments

test-http:
	$(MAKE) $(LANES) -j$(LANE_JOBS) http-fuzz http-payments http-rest

# Notify runs beside the fuzz, apart from the end-to-end tests that import the services: its `orders` copy
# and the orders service's table share SQLModel's one metadata, which a process can define once.
http-fuzz: web  # schemathesis over the OpenAPI document, on a stack of its own
	$(ASYNC) tests/e2e/test_openapi_fuzz.py services/notify

http-payments: web  # payments through the gateway, on the stack and on the chains' stack (the metrics' test on it too)
	$(ASYNC) tests/e2e/test_payments_http.py tests/e2e/test_chain_payments.py tests/e2e/test_provisioning.py \
	  tests/e2e/test_observability.py

http-rest: web
	$(ASYNC) tests/e2e gateway/tests tests/test_env_example.py tests/test_docs_drift.py infra/lib \
	  infra/devnet infra/prometheus infra/grafana infra/k8s admin --ignore=tests/e2e/test_openapi_fuzz.py \
	  --ignore=tests/e2e/test_payments_http.py --ignore=tests/e2e/test_chain_payments.py \
	  --ignore=tests/e2e/test_provisioning.py --ignore=tests/e2e/test_observability.py

# The web frontend in Debian's headless Chromium, against a running stack with its local chains.
test-browser: web
	$(ASYNC) tests/browser web/tests

# The whole system killed, restarted and starved while it is paid, on a RabbitMQ node and a PostgreSQL
# cluster that the suite starts for itself (README: Reliability).
test-faults:
	$(ASYNC) tests/faults

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: install
	infra/test/prepare.sh
	$(MAKE) --no-print-directory web
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) var web/node_modules web/dist
