"""The operator command's areas, and every `kernodeck-admin AREA COMMAND` the docs and the runbook name."""

import re
import subprocess
from pathlib import Path

from kernodeck_admin.main import AREAS, main

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "infra/prometheus/RUNBOOK.md", *ROOT.glob("services/*/README.md")]
NAMED = re.compile(r"kernodeck-admin ([a-z-]+) ([a-z][a-z-]*)")
ADMIN = ROOT / ".venv/bin/kernodeck-admin"


def test_no_area_prints_the_areas_and_an_unknown_one_is_refused(capsys):
    assert main([]) == 2
    printed = capsys.readouterr().out
    assert all(area in printed for area in AREAS)
    assert main(["wallets"]) == 2
    assert "no area 'wallets'" in capsys.readouterr().err


def test_every_command_the_docs_name_exists():
    named = {pair for doc in DOCS for pair in NAMED.findall(doc.read_text())}
    assert {area for area, _ in named} <= set(AREAS)
    assert len(named) > 20
    for area, command in sorted(named):
        # --help parses the command line and stops: an unknown command exits 2 instead.
        done = subprocess.run([str(ADMIN), area, command, "--help"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"kernodeck-admin {area} {command}: {done.stderr}"
