# The readiness check, as the rental's user with its GPUs: prints the diagnostic's JSON, exits non-zero on refusal.
set -euo pipefail
home=$(getent passwd "$KD_USER" | cut -d: -f6)
printf '%s' "$KD_DIAGNOSTIC_B64" | base64 -d > "$home/.kernodeck/diagnostic.py"
chown "$KD_USER:$KD_USER" "$home/.kernodeck/diagnostic.py"
exec runuser -u "$KD_USER" -- env -i HOME="$home" PATH="$KD_ENV/bin:/usr/bin:/bin" ${KD_GPU_ENV} \
  "$KD_ENV/bin/python" "$home/.kernodeck/diagnostic.py" --expect-backend "$KD_BACKEND" --expect-gpus "$KD_GPU_COUNT"
