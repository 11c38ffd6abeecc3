#!/usr/bin/env bash
# Make the machine ready for the tests: the broker with its management API
# (nameko's test fixtures create a vhost per test through it) and PostgreSQL.
set -euo pipefail

# RabbitMQ and PostgreSQL themselves, where a fresh machine lacks them.
"$(dirname "$0")/../local/install.sh" broker database

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq "$seconds"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  echo "prepare: $what is not available after ${seconds}s" >&2
  return 1
}

if ! (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; then
  echo "prepare: starting rabbitmq-server"
  rabbitmq-server -detached
  wait_for 60 "RabbitMQ" bash -c '(exec 3<>/dev/tcp/127.0.0.1/5672)'
fi
if ! curl -fsS -u guest:guest http://127.0.0.1:15672/api/overview >/dev/null 2>&1; then
  echo "prepare: enabling the RabbitMQ management plugin"
  rabbitmq-plugins enable rabbitmq_management >/dev/null
  wait_for 60 "the RabbitMQ management API" curl -fsS -u guest:guest http://127.0.0.1:15672/api/overview
fi

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  echo "prepare: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
  wait_for 30 "PostgreSQL" pg_isready -q -h 127.0.0.1 -p 5432
fi

# The test lanes run in parallel processes (the Makefile), each with its services' connection pools and stacks:
# more connections than Debian's default 100. Raised once per machine (the server restarts for it).
PG_CONNECTIONS=400
if (( $(psql -h 127.0.0.1 -U postgres -Atc "show max_connections") < PG_CONNECTIONS )); then
  echo "prepare: PostgreSQL max_connections -> $PG_CONNECTIONS (a restart)"
  psql -h 127.0.0.1 -U postgres -qc "ALTER SYSTEM SET max_connections = $PG_CONNECTIONS"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main restart
  wait_for 30 "PostgreSQL" pg_isready -q -h 127.0.0.1 -p 5432
fi

# Chain nodes for the payment tests (litecoind, Bitcoin Knots, anvil, solc).
"$(dirname "$0")/../devnet/install.sh"

# sshd and iproute2 for the GPU test hosts (provisioning's delivery tests, the end-to-end stacks).
"$(dirname "$0")/../testhosts/install.sh"

# promtool for the checks of the Prometheus configuration and alert rules (infra/prometheus).
"$(dirname "$0")/../prometheus/install.sh"

# Node.js, npm and Chromium for the web frontend's build and browser tests.
"$(dirname "$0")/../web/install.sh"
