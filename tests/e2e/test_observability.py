"""Every metric a Grafana panel or a Prometheus alert reads is exported by the running system: the gateway,
each service, notify and the chain watchers, scraped as Prometheus scrapes them."""

import httpx

from infra.grafana.queries import SCRAPE_MADE, expressions, metric_names
from infra.local.stack import WATCHER

SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}


def exported(text: str) -> set[str]:
    """The sample names a /metrics page declares (`# TYPE`), whether or not a labelled series has a value yet."""
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            names.update([name, *(name + suffix for suffix in SUFFIXES.get(kind, ()))])
    return names


def metrics_url(stack, name: str) -> str:
    if name == "gateway":
        return f"{stack.url}/metrics"
    env = stack.processes[name].env
    port = env["WATCHER_METRICS_PORT"] if name.startswith(WATCHER) else env[f"{name.upper()}_METRICS_PORT"]
    return f"http://127.0.0.1:{port}/metrics"


def test_every_metric_of_the_dashboards_and_alerts_is_exported(chain_stack):
    scraped = {name: httpx.get(metrics_url(chain_stack, name), timeout=10).text for name in chain_stack.processes}
    assert {name for name in scraped if name.startswith(WATCHER)} == {WATCHER + n for n in chain_stack.watchers}
    available = set().union(*(exported(text) for text in scraped.values())) | SCRAPE_MADE
    missing = {
        where: sorted(metric_names(expression) - available)
        for where, expression in expressions().items()
        if metric_names(expression) - available
    }
    assert missing == {}
