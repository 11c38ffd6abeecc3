#!/usr/bin/env bash
# What the image holds under /opt/kernodeck, made here or in its build (infra/k8s/Dockerfile runs this same
# script): a virtual environment with every third-party package from requirements.lock (pip --require-hashes)
# and Kernodeck's packages installed from the source (not editable), and the built web frontend in web/.
#   assemble.sh python PREFIX      the venv at PREFIX (its bin/ has every kernodeck-* command), made by $PYTHON
#                                  (python3: the image's /usr/local/bin/python3)
#   assemble.sh web BUILT PREFIX   the web build (web/dist, made from web/package-lock.json) into PREFIX/web
set -euo pipefail
cd "$(dirname "$0")/../../.."
PACKAGES=(libs/contracts libs/chains 'libs/kit[service]' libs/resources services/catalog services/accounts
  services/orders services/payments services/chain-watchers services/provisioning services/notify services/support
  gateway admin)
case "${1:-}" in
  python)
    prefix=$2
    "${PYTHON:-python3}" -m venv "$prefix"
    "$prefix/bin/pip" install --quiet --require-hashes -r requirements.lock
    # Built in a copy: setuptools leaves build/ and *.egg-info beside each package's source.
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    for package in "${PACKAGES[@]}"; do
      mkdir -p "$work/$(dirname "${package%%[*}")"
      cp -r "${package%%[*}" "$work/${package%%[*}"
    done
    (cd "$work" && "$prefix/bin/pip" install --quiet --no-deps --no-build-isolation "${PACKAGES[@]/#/./}")
    "$prefix/bin/pip" check
    ;;
  web)
    built=$2 prefix=$3
    [ -e "$built/index.html" ] || { echo "assemble.sh: no web build in $built" >&2; exit 1; }
    rm -rf "$prefix/web"
    mkdir -p "$prefix/web"
    cp "$built/index.html" "$built/app.js" "$built/app.css" "$prefix/web/"
    ;;
  *)
    echo "usage: assemble.sh python PREFIX | web BUILT PREFIX" >&2
    exit 2
    ;;
esac
