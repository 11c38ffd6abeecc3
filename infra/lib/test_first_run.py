"""A first `make run` on a fresh machine: the chain nodes' and the web frontend's installers run side by side,
and the web frontend ends up served, or the gateway says why not.

The installers run for real (infra/local/install.sh, infra/web/install.sh, their apt.sh), as root, on a PATH
where the packages they look for are missing; apt-get is a double that keeps dpkg's rule: one at a time, and
whoever finds its lock held fails at once with "Could not get lock" unless told to wait
(`-o DPkg::Lock::Timeout`). Measured on a fresh machine before apt.sh took turns: `apt-get install chromium`
failed on the lock `apt-get install litecoind` held, and / answered "being built" forever.
"""

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from kernodeck_gateway.app import create_app
from kernodeck_gateway.settings import GatewaySettings

INFRA = Path(__file__).resolve().parents[1]
ROOT = INFRA.parent
# dpkg's lock, as apt-get takes it: fcntl, not waited for unless DPkg::Lock::Timeout says so.
APT_GET = f"""#!{sys.executable}
import fcntl, os, sys, time
args = sys.argv[1:]
wait = 0.0
if args[:1] == ["-o"]:
    wait = float(args[1].split("=", 1)[1])
    args = args[2:]
with open(os.environ["DPKG_LOCK"], "a") as lock:
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if time.monotonic() >= deadline:
                print("E: Could not get lock " + os.environ["DPKG_LOCK"] + ". It is held by process 1 (apt-get)")
                sys.exit(100)
            time.sleep(0.05)
    with open(os.environ["CALLS"], "a") as calls:
        calls.write(" ".join(args) + "\\n")
    time.sleep(float(os.environ.get("HOLD_S", "0.5")))
"""
TOOLS = ("id", "chmod", "rm", "flock", "sleep", "dirname", "cat", "ls")  # what the install scripts use


@pytest.fixture
def machine(tmp_path) -> dict[str, str]:
    """A PATH with the apt-get double and the tools the scripts need, without node, npm, chromium, rabbitmq."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "apt-get").write_text(APT_GET)
    (bin_dir / "apt-get").chmod(0o755)
    for tool in TOOLS:
        found = next(Path(d) / tool for d in ("/usr/bin", "/bin") if (Path(d) / tool).exists())
        (bin_dir / tool).symlink_to(found)
    return {
        "PATH": str(bin_dir),
        "DPKG_LOCK": str(tmp_path / "dpkg-lock"),
        "CALLS": str(tmp_path / "calls"),
        "APT_TURN_LOCK": str(tmp_path / "kernodeck-apt.lock"),
        "APT_LOCK_WAIT_S": "30",
    }


def run_together(env: dict[str, str], *scripts: str) -> list[subprocess.CompletedProcess]:
    started = [
        subprocess.Popen(["/bin/bash", str(INFRA / script), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for script, *args in (s.split() for s in scripts)
    ]  # fmt: skip
    return [subprocess.CompletedProcess(p.args, p.wait(60), *p.communicate()) for p in started]


def get(app, path: str) -> httpx.Response:
    async def fetch() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway") as client:
            return await client.get(path)

    return asyncio.run(fetch())


@pytest.mark.skipif(os.geteuid() != 0, reason="the installers install only as root")
def test_two_installers_side_by_side_both_install_then_the_web_is_served(machine, tmp_path):
    done = run_together(machine, "local/install.sh broker", "web/install.sh")
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    calls = Path(machine["CALLS"]).read_text().splitlines()
    installs = sorted(c.split("--no-install-recommends ")[1] for c in calls if c.startswith("install"))
    assert installs == ["nodejs npm chromium", "rabbitmq-server"]
    assert calls.count("update -qq") == 2
    # The web build then runs (make web: built already by `make test`, else now) and the gateway serves it.
    build = subprocess.run(
        [str(INFRA / "web" / "build.sh")],
        env={**os.environ, "WEB_BUILD_LOG": str(tmp_path / "web-build.log")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout[-2000:]
    page = get(create_app(GatewaySettings(web_dir=ROOT / "web" / "dist", trusted_proxies="none")), "/")
    assert page.status_code == 200 and "<html" in page.text.lower()


@pytest.mark.skipif(os.geteuid() != 0, reason="the installers install only as root")
def test_an_installer_waits_while_another_program_holds_dpkgs_lock(machine):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl,sys,time; f=open(sys.argv[1],'a'); fcntl.lockf(f, fcntl.LOCK_EX); "
         "print('held', flush=True); time.sleep(2)", machine["DPKG_LOCK"]],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout.readline() == "held\n"
    started = time.monotonic()
    [done] = run_together(machine, "web/install.sh")
    holder.wait()
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started >= 1.5  # it waited for the holder instead of failing


def test_a_failed_web_build_is_shown_at_the_root_with_its_reason_until_a_build_succeeds(tmp_path):
    dist = tmp_path / "dist"
    env = {**os.environ, "WEB_DIST": str(dist), "WEB_BUILD_LOG": str(tmp_path / "web-build.log")}
    lock_error = "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)"
    failing = ["bash", "-c", f"echo 'web: installing chromium'; echo '{lock_error}' >&2; exit 100"]
    build = subprocess.run([str(INFRA / "web" / "build.sh"), *failing], env=env, capture_output=True, text=True)
    assert build.returncode == 100
    app = create_app(GatewaySettings(web_dir=dist, trusted_proxies="none"))
    page = get(app, "/")
    assert page.status_code == 503 and "retry-after" not in page.headers
    assert "The web build failed" in page.text and lock_error in page.text and "being built" not in page.text

    # A new attempt: "being built" while it goes on, the build once it is there.
    succeeding = [
        "bash",
        "-c",
        f"test ! -e {dist}/build-failed.txt && for f in index.html app.js app.css; do echo x > {dist}/$f; done",
    ]
    build = subprocess.run([str(INFRA / "web" / "build.sh"), *succeeding], env=env, capture_output=True, text=True)
    assert build.returncode == 0, build.stdout
    assert get(app, "/").status_code == 200
