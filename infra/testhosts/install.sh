#!/usr/bin/env bash
# What the local GPU test hosts need from Debian: sshd (openssh-server, which brings the ssh client the tests
# log in with) and iproute2 for the network namespaces. Installed once; about nothing when present.
# The package's own service is kept from starting: the test hosts run sshd themselves, in their namespaces.
set -euo pipefail
source "$(dirname "$0")/../lib/apt.sh"
need=()
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ip >/dev/null || need+=(iproute2)
apt_install --no-start testhosts "install them to run the GPU test hosts" "${need[@]}"
