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
INFRA = HERE.parent
PROMETHEUS = INFRA / "prometheus" / "prometheus.yml"
KUBERNETES_VERSION = "1.30.0"
OVERLAYS = ("production", "staging")
# The operators' custom resources (RabbitMQ Cluster Operator, CloudNativePG): no schema of the Kubernetes API.
CUSTOM = {"RabbitmqCluster": "rabbitmq.com/v1beta1", "Cluster": "postgresql.cnpg.io/v1",
          "Database": "postgresql.cnpg.io/v1", "ScheduledBackup": "postgresql.cnpg.io/v1"}  # fmt: skip
PROCESSES = {"gateway", "catalog", "accounts", "orders", "payments", "provisioning", "notify", "support",
             *(f"watcher-{network}" for network in METRICS_PORTS)}  # fmt: skip


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


def infra_copy(tmp_path_factory) -> Path:
    """infra/k8s with the monitoring files it includes (infra/prometheus, infra/grafana), copied."""
    copy = tmp_path_factory.mktemp("infra")
    for part in ("k8s", "prometheus", "grafana"):
        shutil.copytree(INFRA / part, copy / part, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return copy


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request, tmp_path_factory) -> tuple[str, list[dict]]:
    """An overlay rendered from a copy of infra/k8s whose secrets/ holds stand-ins (keys only matter here)."""
    overlay = infra_copy(tmp_path_factory) / "k8s" / "overlays" / request.param
    for entry in yaml.safe_load((overlay / "kustomization.yaml").read_text())["secretGenerator"]:
        for path in entry.get("envs", []):
            (overlay / path).write_text("STAND_IN=1\n")
        for spec in entry.get("files", []):
            (overlay / spec.split("=", 1)[1]).write_text("not a key\n")
    (overlay / "secrets" / "site.env").write_text("KERNODECK_PUBLIC_URL=https://kernodeck.test\n")
    return request.param, kustomize(overlay)


def of_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


@pytest.fixture(scope="module")
def monitoring(tmp_path_factory) -> list[dict]:
    return kustomize(infra_copy(tmp_path_factory) / "k8s" / "monitoring")


def validate(doc: dict) -> None:
    if doc["kind"] in CUSTOM:
        assert doc["apiVersion"] == CUSTOM[doc["kind"]], doc["metadata"]["name"]
    else:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_every_object_is_valid_for_the_kubernetes_api(rendered, monitoring):
    _, docs = rendered
    for doc in docs:
        validate(doc)
        assert doc["kind"] == "Namespace" or doc["metadata"].get("namespace") == "kernodeck", doc["metadata"]["name"]
    for doc in monitoring:
        validate(doc)
        assert (
            doc["kind"] in ("Namespace", "ClusterRole", "ClusterRoleBinding")
            or doc["metadata"]["namespace"] == "monitoring"
        )


def test_each_process_is_a_deployment_with_probes_resources_and_its_secret(rendered):
    _, docs = rendered
    deployments, secrets = of_kind(docs, "Deployment"), of_kind(docs, "Secret")
    assert set(deployments) == PROCESSES | {"operator"}
    generated = {name.rsplit("-", 1)[0] for name in secrets}  # kustomize appends a content hash
    for name, deployment in deployments.items():
        if name == "operator":  # the operator's shell: no process to probe
            continue
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        assert {"livenessProbe", "readinessProbe", "startupProbe"} <= set(container), name
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz", name
        # Ready when it can do its own job: the gateway's own probe, not the system's /readyz.
        assert container["readinessProbe"]["httpGet"]["path"] == ("/readyz/self" if name == "gateway" else "/readyz")
        assert {"name": "broker-ca", "mountPath": "/etc/kernodeck/broker-ca", "readOnly": True} in container[
            "volumeMounts"
        ]
        assert set(container["resources"]) == {"requests", "limits"}, name
        assert container["securityContext"]["runAsNonRoot"] is True, name
        references = [ref["secretRef"]["name"] for ref in container["envFrom"] if "secretRef" in ref]
        assert [ref.rsplit("-", 1)[0] for ref in references] == [f"kernodeck-{name}"], name
        assert set(references) <= set(secrets), f"{name}: its Secret is not generated"
    assert {"kernodeck-broker-users", "kernodeck-operator", "kernodeck-provisioning-ssh"} <= generated
    # Named by the operators' resources, which kustomize does not rewrite: no hash.
    assert {"kernodeck-rabbitmq-tls", "postgres-backup-store", "postgres-role-payments", "postgres-role-backup"} <= set(
        secrets
    )


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
    replicated = {name for name, d in of_kind(docs, "Deployment").items() if name not in ("notify", "operator")}
    assert replicated <= budgets


def test_prometheus_finds_every_pod_ready_or_not_through_a_headless_service_on_its_port(rendered, monitoring):
    _, docs = rendered
    services = {**of_kind(docs, "Service"), **of_kind(monitoring, "Service")}
    # rabbitmq-nodes is the RabbitMQ Cluster Operator's own headless Service (not-ready nodes published).
    made_elsewhere = {"rabbitmq-nodes"}
    for job in yaml.safe_load(PROMETHEUS.read_text())["scrape_configs"]:
        [discovery] = job["dns_sd_configs"]
        [name] = discovery["names"]
        service_name, namespace = name.split(".")[:2]
        if service_name in made_elsewhere:
            continue
        service = services[service_name]
        assert discovery["port"] in {port["port"] for port in service["spec"]["ports"]}, job["job_name"]
        if namespace == "kernodeck":  # a crash-looping pod stays a target, so TargetDown fires for it
            assert service["spec"]["clusterIP"] == "None", job["job_name"]
            assert service["spec"].get("publishNotReadyAddresses") is True, job["job_name"]
    assert {job["job_name"] for job in yaml.safe_load(PROMETHEUS.read_text())["scrape_configs"]} >= PROCESSES


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
    assert to_internet == {
        "watchers-to-their-nodes", "payments-to-rate-sources", "notify-to-telegram", "postgres-backups-to-object-storage"
    }  # fmt: skip


def test_the_broker_is_three_nodes_speaking_tls_only_and_its_users_are_written_by_a_job(rendered):
    _, docs = rendered
    broker = of_kind(docs, "RabbitmqCluster")["rabbitmq"]["spec"]
    assert broker["replicas"] == 3 and broker["tls"] == {
        "secretName": "kernodeck-rabbitmq-tls",
        "disableNonTLSListeners": True,
    }
    [job] = of_kind(docs, "Job")["rabbitmq-users"]["spec"]["template"]["spec"]["containers"]
    assert job["command"] == ["kernodeck-admin", "broker", "apply", "--vhost", "kernodeck", "--create-vhost"]
    config = of_kind(docs, "ConfigMap")
    [shared] = [c for name, c in config.items() if name.startswith("kernodeck-config")]
    assert shared["data"]["OPERATOR_BROKER_USERS"] == "kernodeck-admin"


def test_postgres_is_an_operators_cluster_with_a_database_and_role_per_service_and_backups(rendered):
    _, docs = rendered
    cluster = of_kind(docs, "Cluster")["postgres"]["spec"]
    databases = {d["spec"]["name"]: d["spec"]["owner"] for d in of_kind(docs, "Database").values()}
    owners = {"catalog", "accounts", "orders", "payments", "provisioning", "support", "notify"}
    owners |= {f"watcher_{network}" for network in METRICS_PORTS}
    assert databases == {name: name for name in owners}
    assert {r["name"] for r in cluster["managed"]["roles"]} == owners | {"backup"}
    assert cluster["instances"] == 3 and "barmanObjectStore" in cluster["backup"]
    assert of_kind(docs, "ScheduledBackup")["postgres-nightly"]["spec"]["cluster"]["name"] == "postgres"
    [dumps] = of_kind(docs, "CronJob")["postgres-dumps"]["spec"]["jobTemplate"]["spec"]["template"]["spec"][
        "containers"
    ]
    assert dumps["command"] == ["backup.sh", "/backups"]


def test_grafana_reads_prometheus_where_it_runs_and_gets_every_dashboard(monitoring):
    config = {name.rsplit("-", 1)[0]: doc for name, doc in of_kind(monitoring, "ConfigMap").items()}
    [source] = yaml.safe_load(config["grafana-datasources"]["data"]["prometheus.yml"])["datasources"]
    assert source["url"] == "http://prometheus.monitoring.svc.cluster.local:9090"
    assert set(config["kernodeck-dashboards"]["data"]) == {
        p.name for p in (INFRA / "grafana" / "dashboards").glob("*.json")
    }
    mounted = {
        v["configMap"]["name"].rsplit("-", 1)[0]
        for d in of_kind(monitoring, "Deployment").values()
        for v in d["spec"]["template"]["spec"].get("volumes", [])
        if "configMap" in v
    }
    assert mounted == {"grafana-datasources", "grafana-dashboard-providers", "kernodeck-dashboards",
                       "prometheus-config", "prometheus-rules", "alertmanager-config"}  # fmt: skip
