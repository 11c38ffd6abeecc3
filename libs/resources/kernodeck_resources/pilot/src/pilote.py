#!/usr/bin/env python3
"""The Kernodeck pilot: classify the pilot's documents into the allowed categories, resumably.

    python src/pilote.py --config config/pilote.json --run runs/<name>

Every document of the data folder (its id is its file name without `.txt`) ends up in the run's
`summary.json` exactly once: accepted with one allowed category, or rejected with an explicit reason
(unreadable, too short, too long, no allowed category, two categories tied). Nothing is invented: the
summary names only the documents found, and accepted + rejected = the number of documents.

It checkpoints as it goes: each finished document is appended to the run's `checkpoint.jsonl` (flushed to
disk) before the next one starts. Started again with the same `--run` after a stop, in a new process, it
reads the checkpoint and does only what is left; a line cut by the stop is ignored and its document redone.
`--stop-after N` stops the process on purpose after N documents (exit code 75), as a crash would: the
resume test (src/resume_test.py) uses it. Standard library only.
"""

import argparse
import json
import os
import re
import sys
from pathlib import Path

INTERRUPTED = 75  # the exit code of a stop asked for with --stop-after


def load_config(path: Path) -> dict:
    config = json.loads(path.read_text(encoding="utf-8"))
    if not config.get("categories"):
        raise SystemExit(f"{path}: no allowed categories")
    return config


def documents(data_dir: Path, expected: int) -> list[Path]:
    """The pilot's documents, by id; refuses a folder that does not hold exactly the expected number."""
    found = sorted(data_dir.glob("*.txt"))
    if len(found) != expected:
        raise SystemExit(f"{data_dir}: {len(found)} documents, the pilot expects {expected}")
    return found


def classify(raw: bytes, config: dict) -> dict:
    """One document's outcome: {"status": "accepted", "category"} or {"status": "rejected", "reason"}."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return {"status": "rejected", "reason": f"unreadable: not UTF-8 text (byte {error.start})"}
    length = len(text.strip())
    if length < config["min_characters"]:
        return {"status": "rejected", "reason": f"too_short: {length} characters, at least {config['min_characters']}"}
    if length > config["max_characters"]:
        return {"status": "rejected", "reason": f"too_long: {length} characters, at most {config['max_characters']}"}
    lowered = text.lower()
    scores = {
        category: sum(len(re.findall(rf"\b{re.escape(word)}\b", lowered)) for word in words)
        for category, words in config["categories"].items()
    }
    best = max(scores.values())
    leaders = sorted(category for category, score in scores.items() if score == best)
    if best == 0:
        return {"status": "rejected", "reason": "no_allowed_category: no keyword of any allowed category"}
    if len(leaders) > 1:
        return {"status": "rejected", "reason": f"ambiguous: {' and '.join(leaders)} tie at {best}"}
    return {"status": "accepted", "category": leaders[0]}


def read_checkpoint(path: Path) -> dict[str, dict]:
    """The documents finished before, by id; a line cut short by a stop is left out (redone)."""
    done = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[entry["id"]] = entry
    return done


def append_line(path: Path, entry: dict) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry, sort_keys=True) + "\n")
        out.flush()
        os.fsync(out.fileno())


def summarize(ids: list[str], done: dict[str, dict], config: dict) -> dict:
    entries = [done[doc_id] for doc_id in ids]
    accepted = [e for e in entries if e["status"] == "accepted"]
    return {
        "documents": entries,
        "total": len(entries),
        "accepted": len(accepted),
        "rejected": len(entries) - len(accepted),
        "by_category": {c: sum(e.get("category") == c for e in accepted) for c in sorted(config["categories"])},
    }


def run(config_path: Path, run_dir: Path, stop_after: int | None = None) -> int:
    config = load_config(config_path)
    paths = documents(config_path.parent.parent / config["data_dir"], config["expected_documents"])
    ids = [path.stem for path in paths]
    run_dir.mkdir(parents=True, exist_ok=True)
    checkpoint, log = run_dir / "checkpoint.jsonl", run_dir / "log.jsonl"
    done = read_checkpoint(checkpoint)
    unknown = sorted(set(done) - set(ids))
    if unknown:
        raise SystemExit(f"{checkpoint}: documents the data folder does not hold: {', '.join(unknown)}")
    processed = 0
    for path in paths:
        if path.stem in done:
            continue  # finished before the stop: not redone
        if stop_after is not None and processed >= stop_after:
            print(f"stopped on purpose after {processed} documents; start again to resume", file=sys.stderr)
            return INTERRUPTED
        entry = {"id": path.stem, **classify(path.read_bytes(), config)}
        append_line(checkpoint, entry)
        append_line(log, {"id": path.stem, "pid": os.getpid()})
        done[path.stem] = entry
        processed += 1
    summary = summarize(ids, done, config)
    partial = run_dir / "summary.json.partial"
    partial.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    partial.replace(run_dir / "summary.json")
    print(f"{summary['total']} documents: {summary['accepted']} accepted, {summary['rejected']} rejected")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Kernodeck pilot: classify the pilot's documents, resumably")
    parser.add_argument("--config", type=Path, required=True, help="config/pilote.json")
    parser.add_argument("--run", type=Path, required=True, help="runs/<name>: one folder per run")
    parser.add_argument("--stop-after", type=int, help="stop after N documents, as a crash would (resume test)")
    args = parser.parse_args(argv)
    return run(args.config.resolve(), args.run.resolve(), args.stop_after)


if __name__ == "__main__":
    sys.exit(main())
