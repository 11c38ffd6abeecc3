"""What the docs name exists: every setting, command, make target and file a README, the runbook or
.env.example's comments mention. A renamed setting (the runbook's WATCHER_MAX_LAG_S) or a command that never
existed (.env.example's kernodeck-dead-letters) fails here instead of misleading an operator at night."""

import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from infra.local.stack import BIN, ROOT
from tests.test_env_example import SETTINGS, env_keys

CODE = {".py", ".sh", ".yml", ".yaml", ".toml", ".mjs", ".ts", ".tsx", ".json", ".cfg", ".ini"}
PREFIXES = "CATALOG|ACCOUNTS|ORDERS|PAYMENTS|PROVISIONING|SUPPORT|NOTIFY|WATCHER|GATEWAY|KERNODECK|OPERATOR"
SETTING = re.compile(
    rf"(?<![\w$])(?:(?:{PREFIXES}|<[A-Z]+>)_[A-Z0-9_*<>]*[A-Z0-9*>]|AMQP_URI|AMQP_CA_FILE|DATA_DIR|LOG_LEVEL)(?!\w)"
)
ADMIN = re.compile(r"kernodeck-admin ([a-z-]+)(?: ([a-z][a-z-]+)((?:\|[a-z-]+)*))?")
PROGRAM = re.compile(r"(?<![\w/.-])(?<!cd )(kernodeck-[a-z]+)(?![\w/-])")  # not a folder: `kernodeck-pilot/`
MAKE = re.compile(r"`make ([a-z-]+)")
PATH = re.compile(r"(?<![\w/.-])((?:infra|bench|libs|services|gateway|admin|tests|web)/[\w./-]*\w)")


@cache
def repository() -> tuple[Path, ...]:
    """The checkout's files, as git sees them (what it ignores left out)."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    return tuple(ROOT / name for name in listed if (ROOT / name).is_file())


def files(suffixes: set[str], names: tuple[str, ...] = ()) -> list[Path]:
    return [path for path in repository() if path.suffix in suffixes or path.name in names]


@cache
def docs() -> list[Path]:
    return [*files({".md"}), ROOT / ".env.example"]


def prose(path: Path) -> str:
    """The doc's text; of .env.example, only the comments (its settings lines are test_env_example's)."""
    text = path.read_text()
    if path.name == ".env.example":
        return "\n".join(line for line in text.splitlines() if line.startswith("# "))
    return text


@cache
def code_text() -> str:
    return "\n".join(p.read_text(errors="replace") for p in files(CODE, ("Makefile", "Dockerfile")))


@cache
def settings() -> frozenset[str]:
    return frozenset().union(*map(env_keys, SETTINGS))


def setting_exists(name: str) -> bool:
    if re.search(rf"(?<![\w]){re.escape(name)}(?!\w)", code_text()):
        return True
    if any(s.endswith(f"_{name}") for s in settings()):  # a service's table that leaves its prefix out
        return True
    if "*" in name or "<" in name:  # a family: PAYMENTS_*_XPUB, <SERVICE>_EVENT_MAX_DELIVERIES
        pattern = re.compile(
            re.sub(
                r"<[A-Z]+>",
                "[A-Z]+",
                re.escape(name).replace(r"\*", "[A-Z0-9_]*").replace(r"\<", "<").replace(r"\>", ">"),
            )
        )
        return any(pattern.fullmatch(s) for s in settings()) or bool(re.search(rf"\b{pattern.pattern}\b", code_text()))
    return name in settings()


def named(pattern: re.Pattern) -> list[tuple[str, re.Match]]:
    return [(path.relative_to(ROOT).as_posix(), m) for path in docs() for m in pattern.finditer(prose(path))]


def test_every_setting_the_docs_name_exists():
    missing = {(doc, m.group(0)) for doc, m in named(SETTING) if not setting_exists(m.group(0))}
    assert not missing, f"settings named in the docs that nothing reads: {sorted(missing)}"


@cache
def admin_commands(area: str) -> frozenset[str]:
    done = subprocess.run([str(BIN / "kernodeck-admin"), area, "--help"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return frozenset()
    return frozenset(re.findall(r"\{([a-z,-]+)\}", done.stdout)[0].split(",")) if "{" in done.stdout else frozenset()


def test_every_kernodeck_admin_command_the_docs_name_exists():
    missing = set()
    for doc, m in named(ADMIN):
        area, command, alternatives = m.group(1), m.group(2), m.group(3)
        commands = admin_commands(area)
        if not commands:
            missing.add((doc, f"kernodeck-admin {area}"))
            continue
        for name in filter(None, [command, *(alternatives or "").split("|")]):
            if name not in commands:
                missing.add((doc, f"kernodeck-admin {area} {name}"))
    assert not missing, f"operator commands named in the docs that do not exist: {sorted(missing)}"


def test_every_program_the_docs_name_is_installed():
    programs = {m.group(1) for _, m in named(PROGRAM)}
    # A Kubernetes object of that name (the ConfigMap kernodeck-dashboards) is no program, and exists as well.
    missing = {p for p in programs if not (BIN / p).exists() and not shutil.which(p) and p not in code_text()}
    assert not missing, f"programs named in the docs that exist nowhere: {sorted(missing)}"


def test_every_make_target_the_docs_name_exists():
    targets = set(re.findall(r"^([a-z-]+):", (ROOT / "Makefile").read_text(), re.M))
    missing = {(doc, m.group(1)) for doc, m in named(MAKE) if m.group(1) not in targets}
    assert not missing, f"make targets named in the docs that the Makefile lacks: {sorted(missing)}"


def ignored(path: str) -> bool:
    """Made at run time where git ignores it (infra/devnet/.run/nodes.env)."""
    return any(
        subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", p], check=False).returncode == 0
        for p in (path, f"{path}/x")  # a folder's pattern (`.run/`) matches what is in it
    )


@pytest.mark.parametrize("doc", [p.relative_to(ROOT).as_posix() for p in docs()])
def test_every_file_a_doc_names_exists(doc):
    here = (ROOT / doc).parent
    missing = set()
    for m in PATH.finditer(prose(ROOT / doc)):
        name = m.group(1).rstrip(".")
        if any(mark in name for mark in ("*", "<", "NAME", "...")):
            continue
        if any((base / name).exists() for base in (ROOT, here)) or ignored(name):
            continue
        if not any(p.as_posix().endswith(f"/{name}") for p in repository()):  # each service's tests/memory.py
            missing.add(name)
    assert not missing, f"{doc} names files that do not exist: {sorted(missing)}"
