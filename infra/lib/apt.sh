# Sourced by infra/*/install.sh: Debian packages a machine lacks, installed once.
#
#   apt_install [--no-start] WHO HINT PACKAGE...
#
# Nothing to do without a PACKAGE (the caller lists only what is missing). Not root: says on stderr that
# the packages are missing and HINT (what to do, what for), and fails. Root: installs them quietly;
# --no-start keeps the packages' own services from starting (a policy-rc.d for the time of the install,
# when the machine has none), for servers the project starts itself or not at all.

POLICY_RC_D=/usr/sbin/policy-rc.d # where invoke-rc.d asks whether a package's service may start

apt_install() {
  local no_start=""
  if [ "${1:-}" = "--no-start" ]; then no_start=1; shift; fi
  local who=$1 hint=$2
  shift 2
  [ $# -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "$who: $* missing and not root: $hint" >&2
    return 1
  fi
  echo "$who: installing $*"
  local policy=$POLICY_RC_D made_policy="" status=0
  if [ -n "$no_start" ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null); then
    status=1
  fi
  [ -z "$made_policy" ] || rm -f "$policy"
  return "$status"
}
