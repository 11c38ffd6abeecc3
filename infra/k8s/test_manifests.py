"""The Kubernetes manifests, checked offline (no cluster here): each overlay rendered by kustomize (kubectl's
built-in one, or a `kustomize` binary) with stand-in secret files, every object validated against the
Kubernetes API schemas by kubernetes-validate, and the rules of the deployment checked on what is rendered."""

import shutil
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from kernodeck_watchers.config import METRICS_PORTS

HERE = Path(__file__).resolve().parent
PROMETHEUS = HERE.parent / "prometheus" / "prometheus.yml"
KUBERNETES_VERSION = "1.30.0"
OVERLAYS = ("production", "staging")


def kustomize(folder: Path) -> list[dict]:
    if tool := shutil.which("kustomize"):
        argv = [tool, "build", str(folder)]
    else:
        kubectl = shutil.which("kubectl")
        assert kubectl, "kustomize or kubectl is needed to render infra/k8s"
        argv = [kubectl, "kustomize", str(folder)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request, tmp_path_factory) -> tuple[str, list[dict]]:
    """An overlay rendered from a copy of infra/k8s whose secrets/ holds stand-ins (keys only matter here)."""
    copy = tmp_path_factory.mktemp("k8s") / "k8s"
    shutil.copytree(HERE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    overlay = copy / "overlays" / request.param
    for entry in yaml.safe_load((overlay / "kustomization.yaml").read_text())["secretGenerator"]:
        for path in entry.get("envs", []):
            (overlay / path).write_text("STAND_IN=1\n")
        for spec in entry.get("files", []):
            (overlay / spec.split("=", 1)[1]).write_text("not a key\n")
    (overlay / "secrets" / "site.env").write_text("KERNODECK_PUBLIC_URL=https://kernodeck.test\n")
    return request.param, kustomize(overlay)


def of_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


def test_every_object_is_valid_for_the_kubernetes_api(rendered):
    _, docs = rendered
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        assert doc["kind"] == "Namespace" or doc["metadata"].get("namespace") == "kernodeck", doc["metadata"]["name"]


def test_each_process_is_a_deployment_with_probes_resources_and_its_secret(rendered):
    _, docs = rendered
    deployments, secrets = of_kind(docs, "Deployment"), of_kind(docs, "Secret")
    assert set(deployments) == {
        "gateway", "catalog", "accounts", "orders", "payments", "provisioning", "notify", "support",
        *(f"watcher-{network}" for network in METRICS_PORTS),
    }  # fmt: skip
    generated = {name.rsplit("-", 1)[0] for name in secrets}  # kustomize appends a content hash
    for name, deployment in deployments.items():
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        assert {"livenessProbe", "readinessProbe", "startupProbe"} <= set(container), name
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz", name
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz", name
        assert set(container["resources"]) == {"requests", "limits"}, name
        assert container["securityContext"]["runAsNonRoot"] is True, name
        references = [ref["secretRef"]["name"] for ref in container["envFrom"] if "secretRef" in ref]
        assert [ref.rsplit("-", 1)[0] for ref in references] == [f"kernodeck-{name}"], name
        assert set(references) <= set(secrets), f"{name}: its Secret is not generated"
    assert {"kernodeck-rabbitmq", "kernodeck-postgres", "kernodeck-provisioning-ssh"} <= generated


def test_each_chain_watcher_scales_on_its_own(rendered):
    overlay, docs = rendered
    deployments = of_kind(docs, "Deployment")
    replicas = {network: deployments[f"watcher-{network}"]["spec"]["replicas"] for network in METRICS_PORTS}
    wanted = yaml.safe_load((HERE / "overlays" / overlay / "kustomization.yaml").read_text())["replicas"]
    assert replicas == {
        e["name"].removeprefix("watcher-"): e["count"] for e in wanted if e["name"].startswith("watcher-")
    }
    for network, port in METRICS_PORTS.items():
        [container] = deployments[f"watcher-{network}"]["spec"]["template"]["spec"]["containers"]
        assert container["command"] == ["kernodeck-watcher", "--network", network]
        assert {"name": "WATCHER_METRICS_PORT", "value": str(port)} in container["env"]


def test_disruption_budgets_cover_every_replicated_deployment(rendered):
    _, docs = rendered
    budgets = {
        b["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"]
        for b in of_kind(docs, "PodDisruptionBudget").values()
    }
    replicated = {name for name, d in of_kind(docs, "Deployment").items() if name != "notify"}
    assert replicated <= budgets


def test_prometheus_finds_every_job_through_a_headless_service_on_its_port(rendered):
    _, docs = rendered
    services = of_kind(docs, "Service")
    for job in yaml.safe_load(PROMETHEUS.read_text())["scrape_configs"]:
        [discovery] = job["dns_sd_configs"]
        service = services[job["job_name"]]
        assert service["spec"]["clusterIP"] == "None", job["job_name"]
        assert discovery["port"] in {port["port"] for port in service["spec"]["ports"]}, job["job_name"]


def test_the_network_policies_deny_by_default_and_open_the_internet_to_few(rendered):
    _, docs = rendered
    policies = of_kind(docs, "NetworkPolicy")
    assert policies["default-deny"]["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    to_internet = {
        name
        for name, policy in policies.items()
        for rule in policy["spec"].get("egress", [])
        for peer in rule.get("to", [])
        if peer.get("ipBlock", {}).get("cidr") == "0.0.0.0/0"
    }
    assert to_internet == {"watchers-to-their-nodes", "payments-to-rate-sources", "notify-to-telegram"}


def test_rabbitmq_makes_quorum_queues_with_a_dead_letter_policy(rendered):
    _, docs = rendered
    import json

    definitions = json.loads(of_kind(docs, "ConfigMap")["rabbitmq-config"]["data"]["definitions.json"])
    assert definitions["vhosts"][0]["metadata"]["default_queue_type"] == "quorum"
    [policy] = definitions["policies"]
    assert policy["definition"]["dead-letter-exchange"] == definitions["exchanges"][0]["name"]
