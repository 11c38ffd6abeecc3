#!/usr/bin/env bash
# What the web frontend's build and browser tests need: Node.js with npm (the build's tools come from the npm
# registry, web/package-lock.json), Debian's Chromium (the tests drive it headless through Playwright's
# protocol: no browser is downloaded) and fonts that cover Vietnamese. Installed once; about nothing when present.
set -euo pipefail
source "$(dirname "$0")/../lib/apt.sh"
need=()
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v chromium >/dev/null || need+=(chromium)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
apt_install web "install them to build the web frontend and run its browser tests" "${need[@]}"
