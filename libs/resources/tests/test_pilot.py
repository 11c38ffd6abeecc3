"""The pilot mini-project: its rules, and the project run for real in a fresh virtual environment built from
its requirements-rebuild.txt, with its resume test; the resume test catches a pilot that redoes work."""

import importlib.util
import io
import json
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest
from kernodeck_resources import bundle

PILOT = Path(str(resources.files("kernodeck_resources") / "pilot"))
IDS = [f"doc-{n:02d}" for n in range(1, 13)]


def load_pilote():
    spec = importlib.util.spec_from_file_location("pilote", PILOT / "src" / "pilote.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pilote = load_pilote()
CONFIG = json.loads((PILOT / "config" / "pilote.json").read_text())


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        (b"INVOICE 12: amount due 40 USD, payment terms 30 days, VAT included.", {"category": "invoice"}),
        (b"Dear Lan, the parcel left today. Kind regards, Budi and the whole team.", {"category": "letter"}),
        (b"x" * 39, {"reason": "too_short: 39 characters, at least 40"}),
        (b"x" * 40, {"reason": "no_allowed_category: no keyword of any allowed category"}),
        (b"Dear team, the invoice is attached here for you, best wishes from us.", {"reason": "ambiguous: invoice and letter tie at 1"}),
        (b"\xff\xfe not text", {"reason": "unreadable: not UTF-8 text (byte 0)"}),
        (b"The invoices are late: several invoices were lost in the mail this week.", {"reason": "no_allowed_category: no keyword of any allowed category"}),
    ],
)  # fmt: skip
def test_each_document_is_accepted_with_one_category_or_rejected_with_its_reason(raw, outcome):
    result = pilote.classify(raw, CONFIG)
    assert {k: v for k, v in result.items() if k != "status"} == outcome
    assert result["status"] == ("accepted" if "category" in outcome else "rejected")


def test_a_document_over_the_maximum_is_rejected():
    at_most = {**CONFIG, "max_characters": 60}
    assert pilote.classify(b"Dear Ann, " + b"a" * 50, at_most) == {"status": "accepted", "category": "letter"}
    assert pilote.classify(b"Dear Ann, " + b"a" * 51, at_most)["reason"] == "too_long: 61 characters, at most 60"


def test_the_pilot_holds_twelve_documents_one_of_them_invalid_on_purpose():
    names = sorted(p.stem for p in (PILOT / "data" / "pilote").glob("*.txt"))
    assert names == IDS
    with pytest.raises(UnicodeDecodeError):
        (PILOT / "data" / "pilote" / "doc-07.txt").read_bytes().decode("utf-8")


@pytest.fixture
def project(tmp_path) -> Path:
    """The pilot unpacked from the zip the gateway serves, in a folder of its own."""
    zipfile.ZipFile(io.BytesIO(bundle.pilot_zip())).extractall(tmp_path)
    return tmp_path / bundle.PILOT_FOLDER


def fresh_python(project: Path) -> str:
    """A new virtual environment with what requirements-rebuild.txt names installed; its interpreter."""
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "-r", "requirements-rebuild.txt"],
        cwd=project, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    return str(venv / "bin" / "python")


def test_the_pilot_and_its_resume_test_run_in_a_fresh_environment(project):
    python = fresh_python(project)
    launched = subprocess.run(
        [python, "src/pilote.py", "--config", "config/pilote.json", "--run", "runs/first"],
        cwd=project, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert launched.returncode == 0, launched.stderr
    summary = json.loads((project / "runs" / "first" / "summary.json").read_text())
    assert [e["id"] for e in summary["documents"]] == IDS
    assert (summary["total"], summary["accepted"], summary["rejected"]) == (12, 8, 4)
    rejected = {e["id"]: e["reason"].split(":")[0] for e in summary["documents"] if e["status"] == "rejected"}
    assert rejected == {
        "doc-05": "no_allowed_category",
        "doc-07": "unreadable",
        "doc-09": "too_short",
        "doc-12": "ambiguous",
    }
    resumed = subprocess.run([python, "src/resume_test.py"], cwd=project, capture_output=True, text=True, check=False)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert next(line for line in resumed.stdout.splitlines() if line.startswith(("PASS", "FAIL"))).startswith("PASS")


def test_a_stop_writes_no_summary_and_a_cut_line_is_redone(project):
    run = project / "runs" / "cut"
    command = [sys.executable, "src/pilote.py", "--config", "config/pilote.json", "--run", str(run)]
    assert subprocess.run([*command, "--stop-after", "3"], cwd=project, check=False).returncode == 75
    assert not (run / "summary.json").exists()
    checkpoint = run / "checkpoint.jsonl"
    kept = checkpoint.read_text().splitlines()
    checkpoint.write_text("\n".join(kept[:2]) + "\n" + kept[2][:10])  # the third line cut by the stop
    assert subprocess.run(command, cwd=project, check=False).returncode == 0
    redone = [entry["id"] for entry in map(json.loads, (run / "log.jsonl").read_text().splitlines())]
    assert redone.count("doc-03") == 2 and redone.count("doc-01") == 1 and len(redone) == 13


def test_the_resume_test_fails_a_pilot_that_redoes_finished_documents(project):
    source = project / "src" / "pilote.py"
    careless = source.read_text().replace("continue  # finished before the stop: not redone", "pass")
    assert careless != source.read_text()
    source.write_text(careless)
    resumed = subprocess.run([sys.executable, "src/resume_test.py"], cwd=project, capture_output=True, text=True)
    assert resumed.returncode == 1
    assert "FAIL: redone after the stop: doc-01, doc-02, doc-03, doc-04, doc-05" in resumed.stdout


def test_the_zip_is_the_guides_layout_the_same_bytes_each_time():
    names = zipfile.ZipFile(io.BytesIO(bundle.pilot_zip())).namelist()
    top = {name.removeprefix(f"{bundle.PILOT_FOLDER}/").split("/")[0] for name in names}
    assert top == {"README.md", "requirements-rebuild.txt", "config", "data", "src", "runs"}
    assert f"{bundle.PILOT_FOLDER}/runs/README.md" in names and len([n for n in names if "/runs/" in n]) == 1
    bundle.pilot_zip.cache_clear()
    assert bundle.pilot_zip() == bundle.pilot_zip.__wrapped__()


def test_the_index_lists_both_resources_with_the_projects_version():
    listed = bundle.index("/api/v1/resources")
    assert [(r["id"], r["url"]) for r in listed] == [
        ("diagnostic", "/api/v1/resources/diagnostic.py"),
        ("pilot-project", "/api/v1/resources/pilot-project.zip"),
    ]
    assert {r["version"] for r in listed} == {bundle.version()}
    assert "does not prove" in listed[0]["description"]
    assert bundle.diagnostic_script().startswith(b"#!/usr/bin/env python3")
