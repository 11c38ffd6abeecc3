#!/usr/bin/env bash
# promtool for the tests of the scrape configuration and the alert rules: Debian's `prometheus` package.
# Installed once; about nothing when present. The package's own server is kept from starting.
set -euo pipefail
command -v promtool >/dev/null && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "prometheus: promtool missing and not root: install Debian's prometheus package to check the alert rules" >&2
  exit 1
fi
echo "prometheus: installing promtool (Debian's prometheus package)"
made_policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
fi
trap '[ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d' EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
