"""The image serves the whole product. No container runtime or registry is reachable here, so the image's
/opt/kernodeck is assembled on this machine by the script its Dockerfile runs (infra/k8s/image/assemble.sh:
requirements.lock with hashes, our packages from the source, not editable; the web build), outside the
checkout, and the gateway and the catalog run from it as an unprivileged user with the image's settings: `/`
serves the web frontend and the API answers. The Dockerfile itself is read for what the build promises:
every stage from a base pinned by digest, the web built with its lockfile, the lock's hashes, a non-root user."""

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from infra.local.isolation import temporary_vhost
from infra.local.stack import free_port

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "infra" / "k8s" / "Dockerfile").read_text()
NOBODY = 65534


def test_the_dockerfile_builds_from_pinned_bases_with_the_locks_as_a_non_root_user():
    base = re.search(r"^ARG BASE=(\S+)$", DOCKERFILE, re.M).group(1)
    assert re.fullmatch(r"[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}", base)
    assert re.findall(r"^FROM (\S+)", DOCKERFILE, re.M) == ["${BASE}"] * 3  # every stage: the pinned base
    assert "COPY web/package.json web/package-lock.json ./" in DOCKERFILE and "RUN npm ci " in DOCKERFILE
    assert "COPY requirements.lock ./" in DOCKERFILE and "assemble.sh python /opt/kernodeck" in DOCKERFILE
    assert "--require-hashes -r requirements.lock" in (ROOT / "infra" / "k8s" / "image" / "assemble.sh").read_text()
    assert re.search(r"^USER 10001$", DOCKERFILE.strip().splitlines()[-1], re.M)
    assert "GATEWAY_WEB_DIR=/opt/kernodeck/web" in DOCKERFILE


@pytest.fixture(scope="module")
def image_tree():
    """/opt/kernodeck as the image holds it, in a folder every user may read (pytest's are root's only)."""
    web = ROOT / "web" / "dist"
    if not (web / "index.html").exists():
        subprocess.run(["make", "--no-print-directory", "web"], cwd=ROOT, check=True, timeout=900)
    tree = Path(tempfile.mkdtemp(prefix="kd-image-"))
    tree.chmod(0o755)
    prefix = tree / "opt" / "kernodeck"
    try:
        script = ROOT / "infra" / "k8s" / "image" / "assemble.sh"
        # Debian's Python, as the image's base has its own: one every user may run (a pyenv under /root is not)
        env = {**os.environ, "PYTHON": "/usr/bin/python3"}
        subprocess.run([str(script), "python", str(prefix)], env=env, check=True, timeout=900, capture_output=True)
        subprocess.run([str(script), "web", str(web), str(prefix)], check=True, timeout=60)
        yield prefix
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def run_as_nobody(prefix: Path, command: str, env: dict[str, str], data: Path) -> subprocess.Popen:
    image_env = {
        "PATH": f"{prefix}/bin:/usr/bin:/bin",
        "GATEWAY_WEB_DIR": f"{prefix}/web",
        "HOME": str(data),
        "DATA_DIR": str(data),
        **env,
    }
    return subprocess.Popen(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", str(prefix / "bin" / command)],
        env=image_env,
        cwd=data,
        stdout=(data / f"{command}.log").open("wb"),
        stderr=subprocess.STDOUT,
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="runs the image's processes as another user")
def test_what_the_image_holds_serves_the_web_frontend_and_the_api(image_tree):
    assert not list((image_tree / "lib").glob("python3.11/site-packages/__editable__*"))  # installed, not linked
    data = Path(tempfile.mkdtemp(prefix="kd-image-data-"))
    shutil.chown(data, NOBODY, NOBODY)
    port = free_port()
    with temporary_vhost("kd_image") as amqp_uri:
        env = {
            "AMQP_URI": amqp_uri,
            "GATEWAY_PORT": str(port),
            "GATEWAY_TRUSTED_PROXIES": "none",
            "CATALOG_METRICS_PORT": "0",
        }
        processes = [run_as_nobody(image_tree, name, env, data) for name in ("kernodeck-catalog", "kernodeck-gateway")]
        try:
            url = f"http://127.0.0.1:{port}"
            catalog = wait_for(f"{url}/api/v1/catalog", processes, data)
            assert catalog.status_code == 200 and catalog.json()["models"]
            page = httpx.get(f"{url}/", timeout=5)
            assert page.status_code == 200 and "<html" in page.text.lower()
            script = re.search(r'src="(/app\.js[^"]*)"', page.text).group(1)
            assert httpx.get(f"{url}{script}", timeout=5).status_code == 200
            assert httpx.get(f"{url}/readyz/self", timeout=5).json() == {"status": "ok"}
        finally:
            for process in processes:
                process.terminate()
                process.wait(20)
            shutil.rmtree(data, ignore_errors=True)


def wait_for(url: str, processes: list[subprocess.Popen], data: Path, timeout: float = 90.0) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        stopped = [p for p in processes if p.poll() is not None]
        assert not stopped, "\n".join(log.read_text()[-3000:] for log in data.glob("*.log"))
        try:
            answer = httpx.get(url, timeout=5)
            if answer.status_code == 200 or time.monotonic() > deadline:
                return answer
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.5)
