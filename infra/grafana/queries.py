"""Every PromQL expression the dashboards and the alert rules use, and the metric names in them."""

import json
import re
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
DASHBOARDS = sorted((HERE / "dashboards").glob("*.json"))
RULES = HERE.parent / "prometheus" / "rules" / "kernodeck.yml"
METRIC = re.compile(r"\b(kernodeck_[a-z0-9_]+|up)\b(?!\s*\()")
BY_LABELS = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
# Prometheus makes `up` itself for every target; no process exports it.
SCRAPE_MADE = {"up"}


def expressions() -> dict[str, str]:
    """{where: expression}: `dashboard.json: panel title (A)` and `alert NAME`."""
    found = {}
    for path in DASHBOARDS:
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel["targets"]:
                found[f"{path.name}: {panel['title']} ({target['refId']})"] = target["expr"]
    for group in yaml.safe_load(RULES.read_text())["groups"]:
        for rule in group["rules"]:
            found[f"alert {rule['alert']}"] = rule["expr"]
    return found


def metric_names(expression: str) -> set[str]:
    """The metric names an expression reads (label lists of by/on/... and quoted strings left out)."""
    bare = BY_LABELS.sub("", re.sub(r'"[^"]*"', '""', expression))
    return set(METRIC.findall(bare))
