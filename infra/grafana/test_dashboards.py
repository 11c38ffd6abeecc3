"""The Grafana dashboards: well-formed for Grafana, every expression valid PromQL (promtool parses it as a
recording rule). tests/e2e/test_observability.py checks their metrics against a running stack."""

import json
import re
import shutil
import subprocess

import yaml

from infra.grafana.queries import DASHBOARDS, expressions, metric_names

TITLES = {"business", "payments-chains", "provisioning", "services-bus"}


def test_the_four_dashboards_are_there_each_with_its_own_uid():
    assert {path.stem for path in DASHBOARDS} == TITLES
    uids = [json.loads(path.read_text())["uid"] for path in DASHBOARDS]
    assert len(set(uids)) == len(uids)


def test_each_panel_has_an_id_a_place_a_prometheus_source_and_queries():
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text())
        assert dashboard["templating"]["list"][0] == {
            "name": "datasource",
            "label": "Prometheus",
            "type": "datasource",
            "query": "prometheus",
        }
        ids = [panel["id"] for panel in dashboard["panels"]]
        assert len(set(ids)) == len(ids), path.name
        for panel in dashboard["panels"]:
            assert set(panel["gridPos"]) == {"h", "w", "x", "y"} and panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
            assert panel["targets"] and all(target["expr"].strip() for target in panel["targets"]), panel["title"]


def test_every_expression_is_valid_promql(tmp_path):
    rules = [{"record": f"kernodeck:check:{n}", "expr": expr} for n, expr in enumerate(expressions().values())]
    (tmp_path / "queries.yml").write_text(yaml.safe_dump({"groups": [{"name": "queries", "rules": rules}]}))
    done = subprocess.run(
        [shutil.which("promtool") or "promtool", "check", "rules", str(tmp_path / "queries.yml")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_metric_names_are_read_from_expressions_without_labels_or_functions():
    expression = 'histogram_quantile(0.9, sum by (le, up) (rate(kernodeck_a_seconds_bucket{x="kernodeck_no"}[5m])))'
    assert metric_names(expression) == {"kernodeck_a_seconds_bucket"}
    assert metric_names("max by (network) (kernodeck_b - kernodeck_c) > 0.8 * scalar(max(kernodeck_d))") == {
        "kernodeck_b",
        "kernodeck_c",
        "kernodeck_d",
    }
    assert metric_names("sum by (job) (up)") == {"up"}
    assert all(
        re.fullmatch(r"kernodeck_[a-z0-9_]+|up", name) for e in expressions().values() for name in metric_names(e)
    )
