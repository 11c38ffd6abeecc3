#!/usr/bin/env bash
# What the web frontend's build and browser tests need: Node.js with npm (the build's tools come from the npm
# registry, web/package-lock.json), Debian's Chromium (the tests drive it headless through Playwright's
# protocol: no browser is downloaded) and fonts that cover Vietnamese. Installed once; about nothing when present.
set -euo pipefail
need=()
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v chromium >/dev/null || need+=(chromium)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "web: ${need[*]} missing and not root: install them to build the web frontend and run its browser tests" >&2
  exit 1
fi
echo "web: installing ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
