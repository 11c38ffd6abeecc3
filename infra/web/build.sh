#!/usr/bin/env bash
# The web frontend's build beside `make run`'s starting system: `make web` (or the command given), its output
# shown and kept in var/log/web-build.log. When it fails, its last lines go to web/dist/build-failed.txt, which
# the gateway answers / with (503, "the web build failed" and why) until a build succeeds; a new attempt
# removes it first, so the gateway says "being built" only while a build is going on.
set -uo pipefail
cd "$(dirname "$0")/../.."
dist=${WEB_DIST:-web/dist}
failed=$dist/build-failed.txt
log=${WEB_BUILD_LOG:-var/log/web-build.log}
mkdir -p "$(dirname "$log")"
rm -f "$failed"
[ $# -gt 0 ] || set -- make --no-print-directory web
"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  mkdir -p "$dist"
  { grep -v '^[[:space:]]*$' "$log" | tail -n 8; echo "(exit status $status; whole output: $log)"; } >"$failed"
  echo "web: the build failed; the gateway says why at / ($failed)" >&2
fi
exit "$status"
