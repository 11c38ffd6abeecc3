# The end of a rental, or of a delivery that failed: key, processes (the kernel signals them all at once, as the
# user), files, GPUs and user. Idempotent. Exits 3, with the survivors named, when a process of the rental lives
# on: the node then leaves service and the rental's UID stays taken.
set -euo pipefail
kd_reclaim
