# The rental's Unix user, from nothing: what an earlier attempt left goes first; a UID never given before on
# this node (its group's GID the same); a home of mode 0700 whose shell environment the user writes itself; its GPUs' device files given to
# it, every GPU's closed to all but its owner. No key yet: install-key.sh adds it last.
set -euo pipefail
kd_reclaim
own=$(kd_own_gpu_files)
held=$(stat -c '%u %n' $own | awk '$1 != 0')
[ -z "$held" ] || { echo "GPU device files of another rental (UID, file): $held" >&2; exit 1; }
uid=$(kd_next_uid)
groupadd --gid "$uid" "$KD_USER"
useradd --uid "$uid" --gid "$uid" --no-log-init --create-home --shell /bin/bash --password '*' \
  -K HOME_MODE=0700 -K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 "$KD_USER"
home=$(getent passwd "$KD_USER" | cut -d: -f6)
[ "$(stat -c %a "$home")" = 700 ] || { echo "useradd made $home $(stat -c %a "$home"), not 700" >&2; exit 1; }
{
  echo '# Written by Kernodeck. The kernel lets this rental open its own GPUs only; these variables narrow further.'
  echo "export $KD_GPU_ENV"
  echo "export PATH=$KD_ENV/bin:\$PATH TMPDIR=\$HOME/.cache/tmp"
  echo 'umask 077'
} | kd_as_user sh -c '
  set -e
  mkdir -p "$HOME/.kernodeck" "$HOME/.cache/tmp"
  cat > "$HOME/.kernodeck/env"
  for rc in .profile .bashrc; do
    { echo ". \"\$HOME/.kernodeck/env\""; cat "$HOME/$rc" 2>/dev/null || true; } > "$HOME/$rc.new"
    mv "$HOME/$rc.new" "$HOME/$rc"
  done'
chmod go= $(kd_gpu_files)
chown "$KD_USER:root" $own
