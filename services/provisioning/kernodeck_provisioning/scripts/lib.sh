# Sent ahead of every step. What a step writes in the rental's home is written by a process of the rental
# (kd_as_user): a link it planted there leads only where it could go itself. Root writes only in root-owned
# directories (the keys, the UID record) and on the GPUs' device files in /dev.
KD_KEYS=/etc/ssh/authorized_keys  # root-owned; the node's sshd reads AuthorizedKeysFile /etc/ssh/authorized_keys/%u
KD_STATE=/etc/kernodeck           # root-owned: the highest UID ever given to a rental here
KD_UID_FIRST=2000000000           # rentals' UIDs: above every subordinate-ID range, below 2^31

cd /  # what runs as the rental starts where it may be
KD_AS_USER=(setpriv --reuid="$KD_USER" --regid="$KD_USER" --init-groups --reset-env --)

kd_as_user() {  # "$@" as the rental: its UID, GID and groups, a fresh environment
  "${KD_AS_USER[@]}" "$@"
}

kd_gpu_files() {  # the node's per-GPU device files, GPU 0 first (both kinds when no backend is named)
  local patterns='/dev/nvidia[0-9]* /dev/dri/renderD[0-9]*' path
  case "${KD_BACKEND:-}" in cuda) patterns='/dev/nvidia[0-9]*' ;; rocm) patterns='/dev/dri/renderD[0-9]*' ;; esac
  for path in $patterns; do
    if [ -c "$path" ] && [ ! -L "$path" ]; then printf '%s\n' "$path"; fi
  done | sort -V
}

kd_own_gpu_files() {  # the rental's GPUs (KD_GPUS: the node's indices) as device files
  local files index
  mapfile -t files < <(kd_gpu_files)
  for index in ${KD_GPUS//,/ }; do
    [ -n "${files[$index]:-}" ] || { echo "the node has no device file for GPU $index" >&2; return 1; }
    printf '%s\n' "${files[$index]}"
  done
}

kd_processes_of() {  # PIDs whose real, effective, saved or filesystem UID is $1
  { grep -sH '^Uid:' /proc/[0-9]*/status || true; } |  # a process may end between the listing and the read
    awk -v uid="$1" '{ for (i = 2; i <= 5; i++) if ($i == uid) { split($1, part, "/"); print part[3]; next } }'
}

kd_next_uid() {  # one more than any UID a rental ever had on this node: a UID is never given twice
  install -d -m 755 -o root -g root "$KD_STATE"
  exec 9>"$KD_STATE/uid.lock"
  flock 9
  local last highest next
  last=$(cat "$KD_STATE/last-uid" 2>/dev/null || echo $((KD_UID_FIRST - 1)))
  highest=$(getent passwd | awk -F: -v first="$KD_UID_FIRST" '$3 >= first && $3 > top { top = $3 } END { printf "%d", top }')
  next=$(( (last > highest ? last : highest) + 1 ))
  printf '%s\n' "$next" > "$KD_STATE/last-uid.new"
  mv -f "$KD_STATE/last-uid.new" "$KD_STATE/last-uid"
  echo "$next"
}

kd_reclaim() {  # the rental gone from the node: key, processes, files, GPUs, user; 3 when a process survives
  rm -f "$KD_KEYS/$KD_USER"
  local uid home survivors=''
  uid=$(id -u "$KD_USER" 2>/dev/null) || return 0
  home=$(getent passwd "$KD_USER" | cut -d: -f6)
  usermod --expiredate 1 "$KD_USER"  # no new session, not even with a key of its own in ~/.ssh
  crontab -r -u "$KD_USER" 2>/dev/null || true  # nothing of its own starts again: cron, at, a lingering manager
  if [ -d /var/spool/cron/atjobs ]; then find /var/spool/cron/atjobs -xdev -user "$uid" -delete; fi
  if command -v loginctl >/dev/null && [ -d /run/systemd/system ]; then loginctl disable-linger "$KD_USER" || true; fi
  for _ in $(seq 20); do  # one signal reaches them all; the rounds wait for the dead to be reaped
    kd_as_user kill -KILL -1 2>/dev/null || true  # every process of the UID, forks included
    survivors=$(kd_processes_of "$uid")
    [ -z "$survivors" ] && break
    sleep 0.1
  done
  if [ -n "$survivors" ]; then
    echo "processes of $KD_USER (UID $uid) survive: $(echo $survivors)" >&2
    return 3
  fi
  kd_as_user find /tmp /var/tmp /dev/shm -xdev -user "$uid" -delete 2>/dev/null || true
  kd_as_user ipcrm --all 2>/dev/null || true  # its own shared memory, semaphores and queues only
  kd_as_user rm -rf --one-file-system "$home" 2>/dev/null || true  # what it cannot remove, root does below
  local given
  given=$(KD_BACKEND='' kd_gpu_files | xargs -r stat -c '%u %n' | awk -v uid="$uid" '$1 == uid { print $2 }')
  if [ -n "$given" ]; then chown root:root $given && chmod 600 $given; fi
  [ -z "$home" ] || rm -rf --one-file-system "$home"
  rm -f "/var/mail/$KD_USER"
  userdel "$KD_USER"  # and its group; it refuses while a process of the user runs
  ! id "$KD_USER" >/dev/null 2>&1
}
