# notebook: PyTorch and a JupyterLab of the rental's user, on its own port, behind its token.
# The token comes in the environment, never on a command line (other users could read it there).
set -euo pipefail
"$KD_ENV/bin/python" -c 'import torch; print(torch.__version__)'
home=$(getent passwd "$KD_USER" | cut -d: -f6)
if ! (exec 3<>"/dev/tcp/127.0.0.1/$KD_JUPYTER_PORT") 2>/dev/null; then
  runuser -u "$KD_USER" -- env -i HOME="$home" PATH="$KD_ENV/bin:/usr/bin:/bin" JUPYTER_TOKEN="$KD_JUPYTER_TOKEN" \
    ${KD_GPU_ENV} setsid "$KD_ENV/bin/jupyter-lab" --no-browser --ip=0.0.0.0 --port="$KD_JUPYTER_PORT" \
    --ServerApp.root_dir="$home" > "$home/.kernodeck/jupyter.log" 2>&1 < /dev/null &
fi
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$KD_JUPYTER_PORT") 2>/dev/null && exit 0
  sleep 0.2
done
echo "JupyterLab did not start on port $KD_JUPYTER_PORT" >&2
exit 1
