"""The scrape configurations and alert rules, checked by promtool (Debian's `prometheus`, which
infra/prometheus/install.sh installs): configs and rules valid, and every alert fired by one unit test and
held back by another, its annotations as Prometheus renders them; each alert's runbook paragraph exists."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
RULES = HERE / "rules" / "kernodeck.yml"
UNIT_TESTS = HERE / "tests" / "kernodeck_test.yml"
RUNBOOK = HERE / "RUNBOOK.md"
LABEL = re.compile(r"\{\{ \$labels\.(\w+) \}\}")


def promtool(*args: str) -> subprocess.CompletedProcess:
    tool = shutil.which("promtool")
    assert tool, "promtool is missing: run infra/prometheus/install.sh (make test runs it)"
    done = subprocess.run([tool, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def alerts() -> dict[str, dict]:
    return {rule["alert"]: rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]}


@pytest.mark.parametrize("config", ["prometheus.yml", "local.yml"])
def test_the_scrape_configuration_is_valid_with_its_rules(config):
    assert "SUCCESS" in promtool("check", "config", str(HERE / config)).stdout


def test_the_alert_rules_are_valid():
    assert "SUCCESS" in promtool("check", "rules", str(RULES)).stdout


def test_each_alert_fires_in_one_unit_test_and_is_held_back_in_another(tmp_path):
    suite = yaml.safe_load(UNIT_TESTS.read_text())
    rules = alerts()
    fired, held = set(), set()
    for case in suite["tests"]:
        for check in case["alert_rule_test"]:
            rule = rules[check["alertname"]]
            (fired if check["exp_alerts"] else held).add(check["alertname"])
            for expected in check["exp_alerts"]:
                expected["exp_annotations"] = annotations(rule, expected["exp_labels"])
    assert fired == held == set(rules)
    suite["rule_files"] = [str(RULES)]
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(suite))
    assert "SUCCESS" in promtool("test", "rules", str(tmp_path / "tests.yml")).stdout


def annotations(rule: dict, labels: dict) -> dict:
    """The rule's annotations with `{{ $labels.x }}` filled in, the only template they use."""
    rendered = {name: LABEL.sub(lambda m: labels[m.group(1)], text) for name, text in rule["annotations"].items()}
    assert "{{" not in "".join(rendered.values()), rendered
    return rendered


def test_each_alert_has_a_severity_a_summary_and_a_runbook_paragraph():
    sections = dict(re.findall(r"^## (\w+)\n\n(.+?)(?=^## |\Z)", RUNBOOK.read_text(), re.M | re.S))
    for name, rule in alerts().items():
        assert rule["labels"]["severity"] in ("page", "ticket"), name
        assert rule["annotations"]["summary"], name
        assert rule["annotations"]["runbook"] == f"infra/prometheus/RUNBOOK.md#{name.lower()}"
        assert len(sections.get(name, "").split()) > 40, f"{name}: no runbook paragraph in RUNBOOK.md"
    assert set(sections) == set(alerts())


def test_every_process_is_scraped_on_its_metrics_port():
    """Each service (its `*_METRICS_PORT` in .env.example), the gateway and each network's watcher has a job."""
    from kernodeck_watchers.config import METRICS_PORTS

    example = (HERE.parents[1] / ".env.example").read_text()
    ports = {name.lower(): int(port) for name, port in re.findall(r"^#(\w+)_METRICS_PORT=(\d+)$", example, re.M)}
    ports.pop("watcher")  # one port per network, below
    expected = {**ports, **{f"watcher-{net}": port for net, port in METRICS_PORTS.items()}}
    platform = {"rabbitmq": 15692, "postgres": 9187, "kube-state-metrics": 8080}  # Kubernetes only
    # The gateway: its internal port on Kubernetes (infra/k8s), its one port under make run.
    for config, gateway in (("prometheus.yml", 9100), ("local.yml", 8000)):
        jobs = yaml.safe_load((HERE / config).read_text())["scrape_configs"]
        found = {}
        for job in jobs:
            for discovery in job.get("dns_sd_configs", []):
                if job["job_name"] not in platform:
                    assert discovery["names"] == [f"{job['job_name']}.kernodeck.svc.cluster.local"]
                found[job["job_name"]] = discovery["port"]
            for static in job.get("static_configs", []):
                found[job["job_name"]] = int(static["targets"][0].rsplit(":", 1)[1])
        kubernetes_only = platform if config == "prometheus.yml" else {}
        assert found == {**expected, "gateway": gateway, **kubernetes_only}, config


def amtool(*args: str) -> subprocess.CompletedProcess:
    tool = shutil.which("amtool")
    assert tool, "amtool is missing: run infra/prometheus/install.sh (make test runs it)"
    done = subprocess.run([tool, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture
def alertmanager_config(tmp_path) -> Path:
    """alertmanager.yml for Debian's amtool (0.25): it predates webhooks' url_file, which the deployed
    Alertmanager (v0.27, infra/k8s/monitoring) reads; each becomes a url of the same receiver here."""
    text = (HERE / "alertmanager.yml").read_text()
    assert text.count("url_file: /etc/alertmanager/webhooks/") == 2
    path = tmp_path / "alertmanager.yml"
    path.write_text(re.sub(r"url_file: /etc/alertmanager/webhooks/(\S+)", r"url: http://127.0.0.1:9/\1", text))
    return path


def test_alertmanager_pages_for_page_and_files_a_ticket_for_ticket(alertmanager_config):
    amtool("check-config", str(alertmanager_config))
    for rule in alerts().values():
        labels = [f"alertname={rule['alert']}", f"severity={rule['labels']['severity']}"]
        route = amtool("config", "routes", "test", f"--config.file={alertmanager_config}", *labels)
        expected = "pager" if rule["labels"]["severity"] == "page" else "tickets"
        assert route.stdout.strip().splitlines()[-1] == expected, rule["alert"]
