# ubuntu and custom: the base system with the GPU driver; the node image's interpreter runs the readiness check.
set -euo pipefail
test -x "$KD_ENV/bin/python" || { echo "the node image has no $KD_ENV/bin/python" >&2; exit 1; }
