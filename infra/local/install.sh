#!/usr/bin/env bash
# The servers Kernodeck runs on, from Debian's packages when a fresh machine lacks them:
#   install.sh broker            RabbitMQ with its management API (make run: each process's broker user)
#   install.sh broker database   RabbitMQ and PostgreSQL (make test)
#   install.sh venv              what `python3 -m venv` needs (make install): Debian splits it off python3
# A server already installed is left as it is. A PostgreSQL installed here trusts local TCP
# connections (127.0.0.1 and ::1), as the tests' postgres@127.0.0.1 expects, and 300 connections: a development
# machine only.
set -euo pipefail
source "$(dirname "$0")/../lib/apt.sh"
need=()
for part in "$@"; do
  case "$part" in
    broker) command -v rabbitmq-server >/dev/null || need+=(rabbitmq-server) ;;
    database) ls /etc/postgresql/*/main >/dev/null 2>&1 || need+=(postgresql) ;;
    venv) python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv) ;;
    *) echo "install.sh: unknown part '$part' (broker, database, venv)" >&2; exit 2 ;;
  esac
done
enable_management() {  # make run writes each process's broker user through the management API
  [[ " $* " == *" broker "* ]] || return 0
  grep -qs rabbitmq_management /etc/rabbitmq/enabled_plugins && return 0
  rabbitmq-plugins enable --quiet rabbitmq_management >/dev/null 2>&1 \
    || echo "install.sh: could not enable rabbitmq_management: make run gives every process AMQP_URI's user" >&2
}
if [ ${#need[@]} -eq 0 ]; then
  enable_management "$@"
  exit 0
fi
apt_install install.sh "install them first" "${need[@]}"
if [[ " ${need[*]} " == *" postgresql "* ]]; then
  hba=$(ls /etc/postgresql/*/main/pg_hba.conf)
  sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  # The test lanes run several stacks at once, each service with its pool: Debian's 100 connections run out.
  sed -i 's/^#\?max_connections = .*/max_connections = 300/' "$(dirname "$hba")/postgresql.conf"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main restart 2>/dev/null \
    || pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
fi
enable_management "$@"
