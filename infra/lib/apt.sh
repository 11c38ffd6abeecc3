# Sourced by infra/*/install.sh: Debian packages a machine lacks, installed once.
#
#   apt_install [--no-start] WHO HINT PACKAGE...
#
# Nothing to do without a PACKAGE (the caller lists only what is missing). Not root: says on stderr that
# the packages are missing and HINT (what to do, what for), and fails. Root: installs them quietly;
# --no-start keeps the packages' own services from starting (a policy-rc.d for the time of the install,
# when the machine has none), for servers the project starts itself or not at all.
#
# Installers run side by side (`make run` installs the chain nodes while the web frontend's tools install):
# apt_get takes the machine's apt in turn (a lock of the project's own, waited for), and apt-get itself waits
# for dpkg's lock while another program (unattended-upgrades) holds it, instead of failing at once with
# "Could not get lock". `apt-get update` does not wait for its own lock: it is tried again meanwhile.

POLICY_RC_D=/usr/sbin/policy-rc.d # where invoke-rc.d asks whether a package's service may start
APT_TURN_LOCK=${APT_TURN_LOCK:-/var/lock/kernodeck-apt.lock} # one project installer at a time
APT_LOCK_WAIT_S=${APT_LOCK_WAIT_S:-600}                       # how long to wait for apt's and dpkg's locks

# apt_get ARGS...: apt-get, in turn with the project's other installers, waiting for dpkg's lock.
apt_get() {
  (
    flock -w "$APT_LOCK_WAIT_S" 9 || { echo "apt: another installer held $APT_TURN_LOCK for ${APT_LOCK_WAIT_S}s" >&2; exit 1; }
    if [ "$1" = update ]; then
      local waited=0 out
      until out=$(apt-get "$@" 2>&1); do
        if [[ "$out" != *"Could not get lock"* ]] || [ "$waited" -ge "$APT_LOCK_WAIT_S" ]; then
          printf '%s\n' "$out" >&2
          exit 1
        fi
        sleep 2
        waited=$((waited + 2))
      done
      [ -z "$out" ] || printf '%s\n' "$out"
      exit 0
    fi
    apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT_S" "$@"
  ) 9>>"$APT_TURN_LOCK"
}

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
  if ! (apt_get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt_get install -y -qq --no-install-recommends "$@" >/dev/null); then
    status=1
  fi
  [ -z "$made_policy" ] || rm -f "$policy"
  return "$status"
}
