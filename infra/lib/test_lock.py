"""The Python locks (infra/lib/lock.sh): what the inputs resolve to, every file hashed, the image's lock the
same versions as the venv's, and the venv `make install` made holds exactly what requirements-dev.lock pins."""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+) \\$", re.M)


def pins(lock: str) -> dict[str, str]:
    return {normal(name): version for name, version in PIN.findall((ROOT / lock).read_text())}


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def makefile_packages() -> str:
    return re.search(r"^PACKAGES := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1)


@pytest.mark.parametrize("lock", ["requirements-dev.lock", "requirements.lock"])
def test_every_package_is_pinned_with_the_hashes_of_its_files(lock):
    text = (ROOT / lock).read_text()
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 1)[1].strip())
    assert entries and all(
        re.match(r"\S+==\S+ \\\n(    --hash=sha256:[0-9a-f]{64}( \\\n)?)+$", e + "\n") for e in entries
    )
    assert not re.search(r"^-e |/work/|file://", text, re.M)  # no path of this checkout, none of our packages


def test_the_image_gets_the_same_versions_as_the_venv():
    runtime, dev = pins("requirements.lock"), pins("requirements-dev.lock")
    assert runtime and {name: dev.get(name) for name in runtime} == runtime
    assert not {"pytest", "torch", "ruff", "playwright"} & set(runtime)  # the image holds no test tools


def test_the_locks_are_what_the_inputs_resolve_to():
    done = subprocess.run(
        [str(ROOT / "infra" / "lib" / "lock.sh"), "--check"],
        env={**os.environ, "KERNODECK_PACKAGES": makefile_packages()},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_venv_holds_exactly_the_locked_versions():
    frozen = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "pip"), "freeze", "--exclude-editable", "--all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    installed = {normal(n): v for n, v in re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", frozen, re.M)}
    installed.pop("pip", None)  # the venv's own installer, from python3 -m venv
    locked = pins("requirements-dev.lock")
    extra = {name: v for name, v in installed.items() if name not in locked}
    assert not extra, f"installed, not locked (by hand, or left from before the lock: `make clean install`): {extra}"
    assert installed == locked
