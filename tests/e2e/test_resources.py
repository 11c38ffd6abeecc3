"""The customer resources downloaded from the running gateway, unpacked in a temporary folder and run there."""

import io
import json
import subprocess
import sys
import zipfile


def test_the_index_lists_the_resources_each_with_its_address_and_version(client):
    listed = client.get("/api/v1/resources")
    assert listed.status_code == 200, listed.text
    resources = {r["id"]: r for r in listed.json()}
    assert set(resources) == {"diagnostic", "pilot-project"}
    for resource in resources.values():
        assert client.get(resource["url"]).status_code == 200
        assert resource["version"] == client.get(resource["url"]).headers["x-resource-version"]
    assert "does not prove" in resources["diagnostic"]["description"]
    assert client.get("/api/v1/resources/nothing.zip").status_code == 404


def test_the_diagnostic_downloaded_runs_and_refuses_a_cpu_only_pytorch(client, tmp_path):
    downloaded = client.get("/api/v1/resources/diagnostic.py")
    assert downloaded.headers["content-type"].startswith("text/x-python")
    script = tmp_path / "diagnostic.py"
    script.write_bytes(downloaded.content)
    done = subprocess.run([sys.executable, str(script), "--expect-backend", "cuda"], capture_output=True, text=True)
    report = json.loads(done.stdout)
    assert (done.returncode, report["ok"], report["backend"]["name"]) == (1, False, "cpu")  # torch's CPU build here
    assert report["reasons"][0].startswith("cpu_fallback")


def test_the_pilot_project_downloaded_runs_and_passes_its_resume_test(client, tmp_path):
    downloaded = client.get("/api/v1/resources/pilot-project.zip")
    assert downloaded.headers["content-type"] == "application/zip"
    zipfile.ZipFile(io.BytesIO(downloaded.content)).extractall(tmp_path)
    project = tmp_path / "kernodeck-pilot"
    launched = subprocess.run(
        [sys.executable, "src/pilote.py", "--config", "config/pilote.json", "--run", "runs/first"],
        cwd=project, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert launched.returncode == 0, launched.stderr
    summary = json.loads((project / "runs" / "first" / "summary.json").read_text())
    assert (summary["total"], summary["accepted"] + summary["rejected"]) == (12, 12)
    assert sorted(e["id"] for e in summary["documents"]) == [f"doc-{n:02d}" for n in range(1, 13)]
    resumed = subprocess.run([sys.executable, "src/resume_test.py"], cwd=project, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "PASS" in resumed.stdout
