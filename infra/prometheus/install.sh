#!/usr/bin/env bash
# promtool and amtool for the tests of the scrape configuration, the alert rules and Alertmanager's routing:
# Debian's `prometheus` and `prometheus-alertmanager` packages. Installed once; about nothing when present.
# The packages' own servers are kept from starting.
set -euo pipefail
source "$(dirname "$0")/../lib/apt.sh"
need=()
command -v promtool >/dev/null || need+=(prometheus)
command -v amtool >/dev/null || need+=(prometheus-alertmanager)
apt_install --no-start prometheus "they bring promtool and amtool, which check the alert rules and routes" "${need[@]}"
