#!/usr/bin/env bash
# promtool for the tests of the scrape configuration and the alert rules: Debian's `prometheus` package.
# Installed once; about nothing when present. The package's own server is kept from starting.
set -euo pipefail
source "$(dirname "$0")/../lib/apt.sh"
command -v promtool >/dev/null && exit 0
apt_install --no-start prometheus "it brings promtool, which checks the alert rules" prometheus
