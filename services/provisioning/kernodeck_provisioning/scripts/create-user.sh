# The rental's Unix user, its key and its GPUs. Idempotent: a second run leaves the same result.
set -euo pipefail
id "$KD_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash --password '*' "$KD_USER"
home=$(getent passwd "$KD_USER" | cut -d: -f6)
install -d -m 700 -o "$KD_USER" -g "$KD_USER" "$home/.ssh" "$home/.kernodeck"
printf '%s\n' "$KD_SSH_KEY" > "$home/.ssh/authorized_keys"
chown "$KD_USER:$KD_USER" "$home/.ssh/authorized_keys"
chmod 600 "$home/.ssh/authorized_keys"
if [ "$KD_BACKEND" = rocm ]; then
  gpus="export ROCR_VISIBLE_DEVICES=$KD_GPUS HIP_VISIBLE_DEVICES=$KD_GPUS"
else
  gpus="export CUDA_VISIBLE_DEVICES=$KD_GPUS"
fi
printf '# Written by Kernodeck: the GPUs of this rental.\n%s\nexport PATH=%s/bin:$PATH\n' "$gpus" "$KD_ENV" > "$home/.kernodeck/env"
for rc in .profile .bashrc; do
  touch "$home/$rc"
  grep -q 'kernodeck/env' "$home/$rc" || sed -i '1i . "$HOME/.kernodeck/env"' "$home/$rc"
  [ -s "$home/$rc" ] || echo '. "$HOME/.kernodeck/env"' > "$home/$rc"
  chown "$KD_USER:$KD_USER" "$home/$rc"
done
chown "$KD_USER:$KD_USER" "$home/.kernodeck/env"
