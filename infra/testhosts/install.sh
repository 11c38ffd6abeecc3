#!/usr/bin/env bash
# What the local GPU test hosts need from Debian: sshd (openssh-server, which brings the ssh client the tests
# log in with) and iproute2 for the network namespaces. Installed once; about nothing when present.
# The package's own service is kept from starting: the test hosts run sshd themselves, in their namespaces.
set -euo pipefail
need=()
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ip >/dev/null || need+=(iproute2)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "testhosts: ${need[*]} missing and not root: install them to run the GPU test hosts" >&2
  exit 1
fi
echo "testhosts: installing ${need[*]}"
made_policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
fi
trap '[ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d' EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
