# The readiness check as the rental's user, the diagnostic coming on its standard input (never written where
# the rental could put a link). On a node that isolates, it runs without the visibility variables: the kernel
# alone must give it exactly its GPUs, and it must open its own device files and no other GPU's.
set -euo pipefail
args=(--expect-backend "$KD_BACKEND" --expect-gpus "$KD_GPU_COUNT")
read -ra narrowing <<< "$KD_GPU_ENV"
if [ "$KD_ISOLATION" = kernel ]; then
  args+=(--expect-devices "$(kd_own_gpu_files | paste -sd, -)")
  narrowing=()
fi
printf '%s' "$KD_DIAGNOSTIC_B64" | base64 -d |
  kd_as_user env PATH="$KD_ENV/bin:/usr/bin:/bin" "${narrowing[@]}" "$KD_ENV/bin/python" - "${args[@]}"
