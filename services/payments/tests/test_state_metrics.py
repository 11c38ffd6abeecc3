"""What payments reports from its tables at each scrape, and the watchers in its health answer."""

from datetime import timedelta

from prometheus_client import REGISTRY

from kernodeck_contracts.events import WatcherStatus
from services.payments.tests.helpers import UNKNOWN_ERC20, confirm, now, txid
from services.payments.tests.test_intents import SOLANA_POOL, fill_solana_pool


def sample(name: str, **labels) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def test_intents_reviews_addresses_and_rates_are_read_at_each_scrape(payments_ready, payments, watcher, payments_db):
    assert (
        sample("kernodeck_payment_intents_by_status", asset="BTC", network="bitcoin", status="awaiting_transfer") == 0
    )
    assert sample("kernodeck_derivation_index_highest", network="bitcoin") == -1
    assert sample("kernodeck_review_queue_open") == 0
    assert sample("kernodeck_review_queue_oldest_age_seconds") == 0

    paid = payments.create_topup("acc1", 10_000, "BTC", "bitcoin")["payment"]
    payments.create_topup("acc2", 10_000, "BTC", "bitcoin")
    lookalike = payments.create_topup("acc3", 10_000, "USDT", "ethereum")["payment"]
    confirm(watcher, paid, int(paid["amount_base_units"]))
    confirm(watcher, lookalike, 100_000_000, tx=txid(), index=2, token=UNKNOWN_ERC20)  # a wrong asset: reviewed
    payments_db.execute("UPDATE review_items SET created_at = :at", at=now() - timedelta(minutes=30))

    assert sample("kernodeck_payment_intents_by_status", asset="BTC", network="bitcoin", status="settled") == 1
    assert (
        sample("kernodeck_payment_intents_by_status", asset="BTC", network="bitcoin", status="awaiting_transfer") == 1
    )
    assert sample("kernodeck_derivation_index_highest", network="bitcoin") == 1
    assert sample("kernodeck_derivation_index_highest_funded", network="bitcoin") == 0
    assert sample("kernodeck_derivation_index_highest_funded", network="litecoin") == -1
    assert sample("kernodeck_wallet_gap_limit") == 20
    assert sample("kernodeck_review_queue_open") == 1
    assert 1790 < sample("kernodeck_review_queue_oldest_age_seconds") < 1900
    assert sample("kernodeck_address_pool_unused", network="solana") == 0
    fill_solana_pool(payments_db, SOLANA_POOL[:2])
    assert sample("kernodeck_address_pool_unused", network="solana") == 2
    assert sample("kernodeck_address_pool_low_threshold", network="solana") == 20
    assert 0 <= sample("kernodeck_rate_age_seconds", source="file", symbol="BTC") < 60
    assert sample("kernodeck_state_metrics_up", service="payments") == 1


def test_health_names_each_watcher_following_lagging_or_silent(payments, watcher):
    assert payments.health()["watchers"] == {}
    watcher.send(WatcherStatus, network="bitcoin", node_height=100, scanned_height=90, lag_seconds=900, lagging=True)
    watcher.send(WatcherStatus, network="litecoin", node_height=50, scanned_height=50, lag_seconds=0, lagging=False)
    watcher.send(
        WatcherStatus,
        network="tron",
        node_height=7,
        scanned_height=7,
        lag_seconds=0,
        lagging=False,
        unseen=["internal_trx"],
    )
    old = now() - timedelta(minutes=10)  # PAYMENTS_WATCHER_STALE_S is 300
    watcher.send(
        WatcherStatus,
        network="ethereum",
        node_height=9,
        scanned_height=9,
        lag_seconds=0,
        lagging=False,
        occurred_at=old,
    )

    watchers = payments.health()["watchers"]
    assert {network: report["state"] for network, report in watchers.items()} == {
        "bitcoin": "lagging",
        "ethereum": "silent",
        "litecoin": "following",
        "tron": "following",
    }
    assert watchers["bitcoin"]["lag_blocks"] == 10
    assert (watchers["tron"]["degraded"], watchers["litecoin"]["degraded"]) == (["internal_trx"], [])
    assert 590 < sample("kernodeck_watcher_report_age_seconds", network="ethereum") < 700
    assert 0 <= sample("kernodeck_watcher_report_age_seconds", network="litecoin") < 60
    assert sample("kernodeck_rate_max_age_seconds") == 300
