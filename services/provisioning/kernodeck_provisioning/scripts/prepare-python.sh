# python: the node image's Python with pip and venv, first on the user's PATH (create-user.sh puts it there).
set -euo pipefail
"$KD_ENV/bin/python" -c 'import sys, venv; assert sys.version_info >= (3, 10), sys.version'
