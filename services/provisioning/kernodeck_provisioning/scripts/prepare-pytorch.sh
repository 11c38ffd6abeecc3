# pytorch: the image's PyTorch, built for the node's backend (the readiness check proves which one it is).
set -euo pipefail
"$KD_ENV/bin/python" -c 'import torch; print(torch.__version__)'
