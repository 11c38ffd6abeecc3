# inference: PyTorch with the image's inference server toolkit (vLLM) for the customer's own model.
set -euo pipefail
"$KD_ENV/bin/python" -c 'import torch, vllm; print(torch.__version__, vllm.__version__)'
