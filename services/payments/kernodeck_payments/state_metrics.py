"""What payments reports from its tables at each scrape: intents, the review queue, addresses, rates."""

from collections.abc import Iterator
from datetime import datetime

from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import func, select
from sqlmodel import Session

from kernodeck_contracts.statuses import PaymentStatus
from kernodeck_payments.availability import RATE_SYMBOLS, rate_policy, rate_source_names
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.methods import DERIVED_NETWORKS, METHODS
from kernodeck_payments.rates.domain import NoRate, judge_rate
from kernodeck_payments.rates.store import ExchangeRate, observations
from kernodeck_payments.store.addresses import solana_pool_left
from kernodeck_payments.store.tables import (
    AddressCounter,
    ChainTransferRow,
    PaymentIntentRow,
    ReviewItemRow,
    WatcherReport,
)


def gauge(name: str, documentation: str, labels: tuple[str, ...] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=list(labels))


def read_state(session: Session, now: datetime, settings: PaymentsSettings) -> Iterator[GaugeMetricFamily]:
    yield intents_by_method(session)
    yield from review_queue(session, now)
    yield from addresses(session, settings)
    yield rate_ages(session, now)
    yield rates_refused(session, now, settings)
    limit = gauge("kernodeck_rate_max_age_seconds", "PAYMENTS_RATE_MAX_AGE_S: an older rate is no rate")
    limit.add_metric([], settings.rate_max_age_s)
    yield limit
    yield watcher_report_ages(session, now)


def intents_by_method(session: Session) -> GaugeMetricFamily:
    family = gauge(
        "kernodeck_payment_intents_by_status", "Payment intents by method and status", ("asset", "network", "status")
    )
    counted = session.execute(
        select(PaymentIntentRow.asset, PaymentIntentRow.network, PaymentIntentRow.status, func.count()).group_by(
            PaymentIntentRow.asset, PaymentIntentRow.network, PaymentIntentRow.status
        )
    )
    counts = {(asset, network, status): n for asset, network, status, n in counted}
    for method in METHODS:
        for status in PaymentStatus:
            family.add_metric(
                [method.asset, method.network, status.value],
                counts.get((method.asset, method.network, status.value), 0),
            )
    return family


def review_queue(session: Session, now: datetime) -> Iterator[GaugeMetricFamily]:
    count, oldest = session.execute(
        select(func.count(), func.min(ReviewItemRow.created_at)).where(ReviewItemRow.status == "open")
    ).one()
    size = gauge("kernodeck_review_queue_open", "Review items waiting for an operator")
    size.add_metric([], count)
    age = gauge("kernodeck_review_queue_oldest_age_seconds", "Age of the oldest open review item (0: none)")
    age.add_metric([], (now - oldest).total_seconds() if oldest is not None else 0)
    yield size
    yield age


def addresses(session: Session, settings: PaymentsSettings) -> Iterator[GaugeMetricFamily]:
    pool = gauge("kernodeck_address_pool_unused", "Unused deposit addresses in an operator-loaded pool", ("network",))
    pool.add_metric(["solana"], solana_pool_left(session))
    low = gauge(
        "kernodeck_address_pool_low_threshold", "PAYMENTS_SOLANA_POOL_LOW: below it the pool is low", ("network",)
    )
    low.add_metric(["solana"], settings.solana_pool_low)
    next_index = dict(session.execute(select(AddressCounter.network, AddressCounter.next_index)).all())
    paid = dict(
        session.execute(
            select(PaymentIntentRow.network, func.max(PaymentIntentRow.derivation_index))
            .join(ChainTransferRow, ChainTransferRow.intent_id == PaymentIntentRow.id)
            .group_by(PaymentIntentRow.network)
        ).all()
    )
    highest = gauge(
        "kernodeck_derivation_index_highest", "Highest derivation index handed out (-1: none)", ("network",)
    )
    funded = gauge(
        "kernodeck_derivation_index_highest_funded",
        "Highest derivation index that received a transfer (-1: none)",
        ("network",),
    )
    for network in DERIVED_NETWORKS:
        highest.add_metric([network], next_index.get(network, 0) - 1)
        funded.add_metric([network], paid[network] if paid.get(network) is not None else -1)
    gap = gauge(
        "kernodeck_wallet_gap_limit", "PAYMENTS_WALLET_GAP_LIMIT: unused addresses the operator's wallet scans past"
    )
    gap.add_metric([], settings.wallet_gap_limit)
    yield from (pool, low, highest, funded, gap)


def rate_ages(session: Session, now: datetime) -> GaugeMetricFamily:
    family = gauge(
        "kernodeck_rate_age_seconds", "Age of the latest rate observation, by source and symbol", ("source", "symbol")
    )
    for row in session.execute(select(ExchangeRate)).scalars():
        family.add_metric([row.source, row.symbol], (now - row.as_of).total_seconds())
    return family


def rates_refused(session: Session, now: datetime, settings: PaymentsSettings) -> GaugeMetricFamily:
    """1 for the reason a symbol has no rate now (none fresh, too few sources, sources disagreeing, off its peg)."""
    family = gauge(
        "kernodeck_rate_unavailable", "1 when a symbol has no rate to quote, by reason", ("symbol", "reason")
    )
    seen = observations(session, RATE_SYMBOLS, rate_source_names(settings))
    policy = rate_policy(settings)
    for symbol in RATE_SYMBOLS:
        why = judge_rate(symbol, seen[symbol], now, policy).why_none
        for reason in NoRate:
            family.add_metric([symbol, reason.value], 1 if why == reason else 0)
    return family


def watcher_report_ages(session: Session, now: datetime) -> GaugeMetricFamily:
    family = gauge(
        "kernodeck_watcher_report_age_seconds",
        "Age of a network's last watcher report, as payments has it",
        ("network",),
    )
    for row in session.execute(select(WatcherReport)).scalars():
        family.add_metric([row.network], (now - row.reported_at).total_seconds())
    return family
