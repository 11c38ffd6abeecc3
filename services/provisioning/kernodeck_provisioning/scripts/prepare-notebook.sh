# notebook: PyTorch and a JupyterLab of the rental's own on a Unix socket in its home (mode 0700: no other user
# can connect), reached through `ssh -L`. Its token comes on standard input to the rental's user, who writes it in
# its home: never on a command line. Before access is given, the listener is checked to be the rental's process.
set -euo pipefail
"$KD_ENV/bin/python" -c 'import torch; print(torch.__version__)' >&2
home=$(getent passwd "$KD_USER" | cut -d: -f6)
uid=$(id -u "$KD_USER")
socket="$home/.kernodeck/jupyter.sock"
printf '%s' "$KD_JUPYTER_TOKEN" | kd_as_user sh -c 'umask 077 && cat > "$HOME/.kernodeck/jupyter-token"'
read -ra narrowing <<< "$KD_GPU_ENV"
setsid -f "${KD_AS_USER[@]}" env JUPYTER_TOKEN_FILE="$home/.kernodeck/jupyter-token" PATH="$KD_ENV/bin:/usr/bin:/bin" \
  "${narrowing[@]}" sh -c 'exec "$0" --no-browser --ServerApp.sock="$1" --ServerApp.root_dir="$HOME" \
    >> "$HOME/.kernodeck/jupyter.log" 2>&1' "$KD_ENV/bin/jupyter-lab" "$socket" > /dev/null 2>&1 < /dev/null
inode=''
for round in $(seq 150); do
  inode=$(awk -v path="$socket" '$8 == path && $4 == "00010000" { print $7; exit }' /proc/net/unix)
  [ -n "$inode" ] && break
  if [ "$round" -gt 5 ] && [ -z "$(kd_processes_of "$uid")" ]; then
    echo "JupyterLab exited: $(kd_as_user tail -c 300 "$home/.kernodeck/jupyter.log" 2>&1)" >&2
    exit 1
  fi
  sleep 0.1
done
[ -n "$inode" ] || { echo "JupyterLab did not listen on $socket" >&2; exit 1; }
holders=$({ find /proc/[0-9]*/fd -lname "socket:\[$inode\]" 2>/dev/null || true; } | cut -d/ -f3 | sort -u)
[ -n "$holders" ] || { echo "no process holds the listener on $socket" >&2; exit 1; }
for pid in $holders; do
  uids=$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "/proc/$pid/status")
  [ "$uids" = "$uid $uid $uid $uid" ] || { echo "the listener on $socket is process $pid of UIDs $uids" >&2; exit 1; }
done
echo "jupyter_socket=$socket"
