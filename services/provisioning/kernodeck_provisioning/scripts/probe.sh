# What the node provides to keep rentals apart; reads only. One `finding: ...` line per thing missing (the node
# then takes one rental at a time), `info: ...` lines for the rest.
set -uo pipefail
finding() { echo "finding: $*"; }
info() { echo "info: $*"; }
info "kernel $(uname -r)"
if [ "$KD_BACKEND" = rocm ]; then
  [ -c /dev/kfd ] || finding "no /dev/kfd"
elif [ ! -r /proc/driver/nvidia/params ]; then
  finding "no NVIDIA driver (/proc/driver/nvidia/params)"
else
  grep -qx 'ModifyDeviceFiles: 0' /proc/driver/nvidia/params ||
    finding "the NVIDIA driver rewrites device files: load it with NVreg_ModifyDeviceFiles=0"
  [ -c /dev/nvidiactl ] || finding "no /dev/nvidiactl"
fi
mapfile -t files < <(kd_gpu_files)
[ "${#files[@]}" -ge "$KD_GPU_COUNT" ] ||
  finding "${#files[@]} GPU device files for $KD_GPU_COUNT GPUs registered"
if [ "${#files[@]}" -gt 0 ]; then
  while read -r mode path; do
    [ $((8#$mode & 077)) = 0 ] || finding "$path is open beyond its owner (mode $mode): GPU device files must be 0600"
  done < <(stat -c '%a %n' "${files[@]}")
  while read -r path; do
    finding "$path carries an ACL"
  done < <(ls -ld "${files[@]}" | awk 'substr($1, 11, 1) == "+" { print $NF }')
fi
proc=$(awk '$5 == "/proc" { options = $NF } END { print options }' /proc/self/mountinfo)
case ",$proc," in
  *,hidepid=invisible,* | *,hidepid=2,* | *,hidepid=ptraceable,* | *,hidepid=4,*) ;;
  *) finding "/proc shows every user's processes: mount it with hidepid=invisible" ;;
esac
sshd=$(sshd -T 2>/dev/null)
case " $(awk '$1 == "authorizedkeysfile"' <<< "$sshd") " in
  *" /etc/ssh/authorized_keys/%u "*) ;;
  *) finding "sshd does not read /etc/ssh/authorized_keys/%u (AuthorizedKeysFile)" ;;
esac
case "$(awk '$1 == "allowstreamlocalforwarding" { print $2 }' <<< "$sshd")" in
  yes | all | local) ;;
  *) finding "sshd refuses forwarding to Unix sockets (AllowStreamLocalForwarding): JupyterLab is reached so" ;;
esac
if [ -r /etc/subuid ] && awk -F: -v first="$KD_UID_FIRST" '$2 + $3 > first' /etc/subuid | grep -q .; then
  finding "/etc/subuid gives IDs from $KD_UID_FIRST on, the rentals' UIDs"
fi
for tool in setpriv useradd userdel usermod flock find base64; do
  command -v "$tool" >/dev/null || finding "no $tool"
done
setpriv --help 2>/dev/null | grep -q -- --reset-env || finding "setpriv has no --reset-env (util-linux 2.35 or later)"
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then info "cgroup v2"; else info "cgroup v1 or hybrid"; fi
[ -d /run/systemd/system ] && info "systemd"
true
