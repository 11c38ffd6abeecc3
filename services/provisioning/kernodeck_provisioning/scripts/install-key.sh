# Last, once preparation and the readiness check passed: the customer's key, in the root-owned directory that
# the node's sshd reads (AuthorizedKeysFile /etc/ssh/authorized_keys/%u). reclaim.sh removes it first.
set -euo pipefail
install -d -m 755 -o root -g root "$KD_KEYS"
umask 022
printf '%s\n' "$KD_SSH_KEY" > "$KD_KEYS/.$KD_USER.new"
mv -f "$KD_KEYS/.$KD_USER.new" "$KD_KEYS/$KD_USER"
