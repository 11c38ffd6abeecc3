# The end of the term: keys revoked, the user's processes stopped, its files wiped. Idempotent.
set -euo pipefail
uid=$(id -u "$KD_USER" 2>/dev/null) || exit 0
home=$(getent passwd "$KD_USER" | cut -d: -f6)
rm -f "$home/.ssh/authorized_keys"
for _ in $(seq 50); do
  pkill -KILL -U "$uid" 2>/dev/null || true
  pgrep -U "$uid" >/dev/null || break
  sleep 0.1
done
find /tmp /var/tmp /dev/shm -xdev -uid "$uid" -delete 2>/dev/null || true
userdel --remove --force "$KD_USER" 2>/dev/null || true
rm -rf "$home"
! id "$KD_USER" >/dev/null 2>&1
