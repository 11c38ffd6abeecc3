"""infra/lib/apt.sh, the install scripts' one way to Debian packages: nothing to do when nothing is missing,
a clear failure when not root, apt-get's update and install as root, a package's service kept from starting
on request. apt-get is a script recording its calls (the real one would change this machine); the install
scripts themselves run for real: on a machine that has everything, twice, they do nothing."""

import subprocess
from pathlib import Path

import pytest

INFRA = Path(__file__).resolve().parents[1]
APT_GET = """#!/bin/sh
printf '%s policy=%s\\n' "$*" "$([ -x "$POLICY" ] && echo on || echo off)" >> "$CALLS"
for arg in "$@"; do [ "$arg" != "$FAIL" ] || exit 1; done
"""


def apt_install(
    tmp_path: Path, args: str, uid: int = 0, fail: str = ""
) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`apt_install ARGS` as user `uid`, with the recording apt-get first on PATH and the policy in tmp_path."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "apt-get").write_text(APT_GET)
    (fake / "apt-get").chmod(0o755)
    calls, policy = tmp_path / "calls", tmp_path / "policy-rc.d"
    script = (
        f"set -euo pipefail; source {INFRA}/lib/apt.sh; POLICY_RC_D={policy}; APT_TURN_LOCK={tmp_path}/turn; "
        f"id() {{ echo {uid}; }}; apt_install {args}"
    )
    env = {"PATH": f"{fake}:/usr/bin:/bin", "CALLS": str(calls), "POLICY": str(policy), "FAIL": fail}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=False)
    assert not policy.exists()  # made for the install only
    return done, calls.read_text().splitlines() if calls.exists() else []


def test_nothing_missing_is_nothing_to_do(tmp_path):
    done, calls = apt_install(tmp_path, "web 'install them'", uid=1000)
    assert (done.returncode, done.stdout, done.stderr, calls) == (0, "", "", [])


def test_not_root_says_what_is_missing_and_fails(tmp_path):
    done, calls = apt_install(tmp_path, "web 'install them to build the web frontend' nodejs npm", uid=1000)
    assert done.returncode == 1 and calls == []
    assert done.stderr == "web: nodejs npm missing and not root: install them to build the web frontend\n"


@pytest.mark.parametrize(("option", "policy"), [("", "off"), ("--no-start", "on")])
def test_root_updates_the_lists_and_installs_the_missing_packages(tmp_path, option, policy):
    done, calls = apt_install(tmp_path, f"{option} testhosts 'unused' openssh-server iproute2")
    assert done.returncode == 0 and done.stdout == "testhosts: installing openssh-server iproute2\n"
    assert calls == [
        f"update -qq policy={policy}",
        f"-o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends openssh-server iproute2 policy={policy}",
    ]


@pytest.mark.parametrize("step", ["update", "install"])
def test_a_failed_apt_get_fails_and_leaves_no_policy_behind(tmp_path, step):
    done, calls = apt_install(tmp_path, "--no-start prometheus 'unused' prometheus", fail=step)
    assert done.returncode == 1 and len(calls) == (1 if step == "update" else 2)


@pytest.mark.parametrize(
    "script",
    ["local/install.sh broker database venv", "web/install.sh", "prometheus/install.sh", "testhosts/install.sh"],
)
def test_each_install_script_on_a_machine_that_has_everything_does_nothing_twice(script):
    path, *args = script.split()
    for _ in range(2):
        done = subprocess.run([str(INFRA / path), *args], capture_output=True, text=True, timeout=60, check=False)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done
