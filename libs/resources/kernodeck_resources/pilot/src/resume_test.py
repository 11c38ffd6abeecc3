#!/usr/bin/env python3
"""The resume test: stop the pilot in the middle, start it again in a new process, and check the result.

    python src/resume_test.py [--config config/pilote.json] [--stop-after 5]

1. An uninterrupted run, in its own process: the reference summary.
2. A second run stopped on purpose after `--stop-after` documents (its process ends, as a crash would),
   then started again with the same run folder in a fresh process.
3. Checks: the documents finished before the stop were not redone (each id was processed by exactly one
   of the two processes, the first one's are all in the checkpoint), the resumed summary equals the
   reference, and it names each of the documents exactly once, accepted with one allowed category or
   rejected with a reason, accepted + rejected = all of them.

Prints what it checked and exits 0 when everything holds, 1 otherwise. Standard library only.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
INTERRUPTED = 75


def launch(config: Path, run_dir: Path, *extra: str) -> int:
    """pilote.py in a new process of the same interpreter."""
    command = [sys.executable, str(HERE / "pilote.py"), "--config", str(config), "--run", str(run_dir), *extra]
    return subprocess.run(command, check=False).returncode


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def problems(config_path: Path, stop_after: int, runs: Path) -> list[str]:
    config = json.loads(config_path.read_text(encoding="utf-8"))
    ids = sorted(p.stem for p in (PROJECT / config["data_dir"]).glob("*.txt"))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    reference, resumed = runs / f"resume-{stamp}-reference", runs / f"resume-{stamp}-interrupted"
    found = []
    if launch(config_path, reference) != 0:
        return ["the uninterrupted run failed"]
    if launch(config_path, resumed, "--stop-after", str(stop_after)) != INTERRUPTED:
        return [f"the run did not stop after {stop_after} documents"]
    if (resumed / "summary.json").exists():
        found.append("a summary was written before every document was done")
    before = lines(resumed / "log.jsonl")
    if len(before) != stop_after:
        found.append(f"{len(before)} documents done before the stop, expected {stop_after}")
    if launch(config_path, resumed) != 0:
        return [*found, "the resumed run failed"]
    log = lines(resumed / "log.jsonl")
    processes = sorted({entry["pid"] for entry in log})
    if len(processes) != 2:
        found.append(f"expected the work of 2 processes, found {len(processes)}")
    done_by = {}
    for entry in log:
        done_by.setdefault(entry["id"], []).append(entry["pid"])
    redone = sorted(doc_id for doc_id, pids in done_by.items() if len(pids) > 1)
    if redone:
        found.append(f"redone after the stop: {', '.join(redone)}")
    if sorted(done_by) != ids:
        found.append("the two processes did not process every document")
    summary = json.loads((resumed / "summary.json").read_text(encoding="utf-8"))
    if summary != json.loads((reference / "summary.json").read_text(encoding="utf-8")):
        found.append("the resumed summary differs from the uninterrupted one")
    found += check_summary(summary, ids, set(config["categories"]))
    return found


def check_summary(summary: dict, ids: list[str], categories: set[str]) -> list[str]:
    """Each id exactly once, nothing invented, one allowed category or a reason each, and the counts add up."""
    found = []
    named = [entry["id"] for entry in summary["documents"]]
    if sorted(named) != ids or len(named) != len(set(named)):
        found.append("the summary does not name each document exactly once")
    for entry in summary["documents"]:
        accepted = entry["status"] == "accepted" and entry.get("category") in categories
        rejected = entry["status"] == "rejected" and bool(entry.get("reason"))
        if not (accepted or rejected):
            found.append(f"{entry['id']}: neither accepted in an allowed category nor rejected with a reason")
    if summary["accepted"] + summary["rejected"] != len(ids) or summary["total"] != len(ids):
        found.append("accepted + rejected is not the number of documents")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Kernodeck pilot: the resume test")
    parser.add_argument("--config", type=Path, default=PROJECT / "config" / "pilote.json")
    parser.add_argument("--stop-after", type=int, default=5)
    parser.add_argument("--runs", type=Path, default=PROJECT / "runs")
    args = parser.parse_args(argv)
    found = problems(args.config.resolve(), args.stop_after, args.runs.resolve())
    for problem in found:
        print(f"FAIL: {problem}")
    if not found:
        print(f"PASS: stopped after {args.stop_after} documents, resumed in a new process, nothing redone,")
        print("      the same summary as an uninterrupted run, every document once, accepted + rejected = all")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
