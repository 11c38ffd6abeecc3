# blender: the image's Blender, rendering on the GPU (CUDA/OptiX on NVIDIA, HIP on AMD).
set -euo pipefail
"$KD_ENV/bin/blender" --version | head -n 1
