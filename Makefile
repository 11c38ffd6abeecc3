# Kernodeck: `make run` runs the whole system, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PACKAGES := libs/contracts libs/chains 'libs/kit[service]' libs/resources services/catalog services/accounts services/orders services/payments services/chain-watchers services/provisioning services/notify services/support gateway admin
PYPROJECTS := $(wildcard libs/*/pyproject.toml services/*/pyproject.toml gateway/pyproject.toml admin/pyproject.toml)
# The venv is current while what it was installed from is the same: named by its content, not its files' times
# (a checkout or a rebase that changes no dependency installs nothing).
STAMP := $(VENV)/.installed-$(shell cat $(PYPROJECTS) requirements-dev.txt | sha256sum | cut -c1-16)

.PHONY: install web run test test-services test-http test-browser test-faults lint bench clean

# Our packages build with the venv's own setuptools (no isolated build environment per package: 14 of them
# took minutes, this a few seconds).
$(STAMP):
	test -x $(BIN)/python || { infra/local/install.sh venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/pip install -q --upgrade pip 'setuptools>=68,<81'
	$(BIN)/pip install -q --no-build-isolation -r requirements-dev.txt $(addprefix -e ,$(PACKAGES))
	rm -f $(VENV)/.installed*
	touch $@

install: $(STAMP)

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

# Services and the kit run under eventlet (the kit's pytest plugin patches
# first); the gateway, notify (an asyncio process) and the end-to-end tests run
# under asyncio in their own process.
test: install
	infra/test/prepare.sh
	$(MAKE) --no-print-directory web
	$(MAKE) --no-print-directory lint test-services test-http test-browser test-faults

test-services:
	$(BIN)/python -m pytest -p kernodeck_kit.testing libs services tests/integration --ignore=services/notify

test-http:
	$(BIN)/python -m pytest -p no:pytest_nameko gateway/tests services/notify tests/e2e tests/test_env_example.py tests/test_docs_drift.py infra/lib infra/devnet infra/prometheus infra/grafana infra/k8s admin

# The web frontend in Debian's headless Chromium, against a running stack with its local chains.
test-browser:
	$(BIN)/python -m pytest -p no:pytest_nameko tests/browser web/tests

# The whole system killed, restarted and starved while it is paid, on a RabbitMQ node and a PostgreSQL
# cluster that the suite starts for itself (README: Reliability).
test-faults:
	$(BIN)/python -m pytest -p no:pytest_nameko tests/faults

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: install
	infra/test/prepare.sh
	$(MAKE) --no-print-directory web
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) var web/node_modules web/dist
