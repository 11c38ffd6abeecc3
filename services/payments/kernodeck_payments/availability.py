"""Which methods can take a payment right now, and why not."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from fractions import Fraction

from sqlalchemy import select
from sqlmodel import Session

from kernodeck_contracts.events import WatcherStatus
from kernodeck_kit.types import rfc3339
from kernodeck_payments.account_keys import key_problem
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.methods import METHODS, Method, TokenContractError, token_contract
from kernodeck_payments.rates.domain import Rate, RatePolicy, choose_rate
from kernodeck_payments.rates.store import observations
from kernodeck_payments.store.addresses import solana_pool_left
from kernodeck_payments.store.tables import MethodSwitch, WatcherReport

DISABLED = "disabled"
RATE_UNAVAILABLE = "rate_unavailable"
CHAIN_LAGGING = "chain_lagging"
ADDRESS_POOL_EMPTY = "address_pool_empty"
RATE_SYMBOLS = sorted({method.rate_symbol for method in METHODS})
NETWORKS = sorted({method.network for method in METHODS})


@dataclass(frozen=True)
class MethodBoard:
    """A snapshot of everything a method needs, read once per request."""

    switched_on: dict[tuple[str, str], bool]
    rates: dict[str, Rate | None]
    lagging_networks: frozenset[str]
    solana_pool_left: int

    def reason(self, method: Method) -> str | None:
        if not self.switched_on[(method.asset, method.network)]:
            return DISABLED
        if method.network in self.lagging_networks:
            return CHAIN_LAGGING
        if self.rates[method.rate_symbol] is None:
            return RATE_UNAVAILABLE
        if method.network == "solana" and self.solana_pool_left == 0:
            return ADDRESS_POOL_EMPTY
        return None

    def rate(self, method: Method) -> Rate | None:
        return self.rates[method.rate_symbol]


def rate_policy(settings: PaymentsSettings) -> RatePolicy:
    return RatePolicy(
        max_age=timedelta(seconds=settings.rate_max_age_s),
        peg_guard=settings.peg_guard,
        min_sources=settings.rate_min_sources,
        max_spread=settings.rate_max_spread,
    )


def rate_source_names(settings: PaymentsSettings) -> list[str]:
    names = [name.strip() for name in settings.rate_sources.split(",") if name.strip()]
    return [*names, "file"] if settings.rate_file and "file" not in names else names


def current_rates(
    session: Session, settings: PaymentsSettings, now: datetime, symbols: Sequence[str] = RATE_SYMBOLS
) -> dict[str, Rate | None]:
    seen = observations(session, symbols, rate_source_names(settings))
    policy = rate_policy(settings)
    return {symbol: choose_rate(symbol, seen[symbol], now, policy) for symbol in symbols}


def current_price(session: Session, settings: PaymentsSettings, symbol: str, now: datetime) -> Fraction | None:
    rate = current_rates(session, settings, now, [symbol])[symbol]
    return rate.price if rate else None


_SWITCHES = select(MethodSwitch)  # built once, as every instructions' board reads them
_REPORTS = select(WatcherReport)


def load_board(session: Session, settings: PaymentsSettings, now: datetime) -> MethodBoard:
    switches = {(row.asset, row.network): row.enabled for row in session.execute(_SWITCHES).scalars()}
    off_by_default = settings.switched_off()
    switched_on = {
        (m.asset, m.network): is_configured(m, settings)
        and switches.get((m.asset, m.network), (m.asset, m.network) not in off_by_default)
        for m in METHODS
    }
    stale_before = now - timedelta(seconds=settings.watcher_stale_s)
    reports = {row.network: row for row in session.execute(_REPORTS).scalars()}
    # A network no watcher has reported on (none running, or not yet) would never see its payments.
    lagging = frozenset(
        network
        for network in NETWORKS
        if (report := reports.get(network)) is None or report.lagging or report.reported_at < stale_before
    )
    return MethodBoard(switched_on, current_rates(session, settings, now), lagging, solana_pool_left(session))


def is_configured(method: Method, settings: PaymentsSettings) -> bool:
    """Without a usable account key (or, for a token, its contract) a method cannot take payments at all."""
    if method.network != "solana":
        xpub = settings.xpub(method.network)
        if not xpub or key_problem(method.network, xpub, settings.chain(method.network)) is not None:
            return False
    try:
        token_contract(method, settings.chain(method.network), settings.token_overrides())
    except TokenContractError:
        return False
    return True


def watcher_reports(session: Session, settings: PaymentsSettings, now: datetime) -> dict[str, dict]:
    """Each network's last watcher report, as /readyz shows it: `following` unless lagging or silent."""
    stale_before = now - timedelta(seconds=settings.watcher_stale_s)
    reports = {}
    for row in session.execute(select(WatcherReport).order_by(WatcherReport.network)).scalars():
        state = "lagging" if row.lagging else "silent" if row.reported_at < stale_before else "following"
        reports[row.network] = {
            "state": state,
            "lag_blocks": row.lag_blocks,
            "reported_at": rfc3339(row.reported_at),
            # what the watcher cannot see (ETH or TRX sent by a contract): degraded, the balance check its backstop
            "degraded": row.unseen.split(",") if row.unseen else [],
        }
    return reports


def record_watcher_status(session: Session, event: WatcherStatus) -> None:
    """A network's watcher report, unless a newer one is recorded already."""
    row = session.get(WatcherReport, event.network) or WatcherReport(network=event.network)
    if row.reported_at is None or event.occurred_at > row.reported_at:
        row.lagging, row.lag_blocks = event.lagging, event.node_height - event.scanned_height
        row.unseen = ",".join(sorted(event.unseen))
        row.reported_at = event.occurred_at
        session.add(row)
