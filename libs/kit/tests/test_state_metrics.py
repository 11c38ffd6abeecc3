"""Gauges read from a service's tables at scrape time, against PostgreSQL."""

from nameko.rpc import rpc
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import text

from kernodeck_contracts.events import OrderCreated
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.state_metrics import StateMetrics
from kernodeck_kit.testing import service_config

SERVICE = {"service": "reporter"}


def outbox_rows(session, _now, _settings):
    family = GaugeMetricFamily("kernodeck_test_outbox_rows", "Rows in the test's outbox", labels=["service"])
    family.add_metric(["reporter"], session.execute(text("SELECT count(*) FROM outbox")).scalar_one())
    yield family


class Reporter:
    name = "reporter"
    state = StateMetrics(outbox_rows)

    @rpc
    def health(self):
        return {}


def test_a_scrape_reads_the_tables_as_they_are_now(container_factory, rabbit_config, pg_database):
    url = pg_database()
    container = container_factory(Reporter, service_config(rabbit_config, url))
    container.start()
    assert REGISTRY.get_sample_value("kernodeck_test_outbox_rows", SERVICE) == 0
    engine = make_engine(url)
    with Store(engine, "orders", relay=None).transaction() as tx:
        tx.emit(
            OrderCreated(
                order_id="o-1",
                account_id="a",
                model_id="h100",
                duration_days=3,
                lots=1,
                total_gpus=1,
                preparation="ubuntu",
                total_usd_cents=100,
            )
        )
    engine.dispose()
    assert REGISTRY.get_sample_value("kernodeck_test_outbox_rows", SERVICE) == 1
    assert REGISTRY.get_sample_value("kernodeck_state_metrics_up", SERVICE) == 1
    container.stop()
    assert REGISTRY.get_sample_value("kernodeck_state_metrics_up", SERVICE) is None


def test_an_unreadable_database_reports_down_and_keeps_the_other_metrics(container_factory, rabbit_config):
    gone = "postgresql://postgres@127.0.0.1:5432/kd_no_such_database"
    container_factory(Reporter, service_config(rabbit_config, gone)).start()
    assert REGISTRY.get_sample_value("kernodeck_state_metrics_up", SERVICE) == 0
    assert REGISTRY.get_sample_value("kernodeck_test_outbox_rows", SERVICE) is None
    assert b"kernodeck_entrypoint_seconds" in generate_latest()  # the endpoint still answers whole
