"""What the transfers seen on an intent's address mean: the reconciliation rules.

Pure and deterministic: given the intent and every transfer recorded on its
address, it says which status the intent has, whether it settles now, what
to credit to the balance and what to send to review. Each credit and review
carries a key derived from what caused it, so running it again after a
crash or a redelivery never credits or queues twice.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction

from kernodeck_contracts.statuses import PaymentStatus, TransferStatus
from kernodeck_payments.domain.intents import (
    Disposition,
    Intent,
    Purpose,
    Transfer,
)

UsdOf = Callable[[int, Fraction], int]  # base units at a price -> USD cents, rounded down
PriceNow = Callable[[], Fraction | None]  # the current rate; None when there is none

PENDING = frozenset({TransferStatus.SEEN, TransferStatus.CONFIRMING})


def topup_key(intent_id: str) -> str:
    """The key a top-up's own credit is booked under."""
    return f"topup:{intent_id}"


@dataclass(frozen=True)
class Credit:
    cents: int
    reason: str
    key: str


@dataclass(frozen=True)
class Review:
    reason: str
    key: str
    transfer_key: str
    group: str | None = None  # reviews of one group join its open item (review_items.group_key)


@dataclass
class Outcome:
    status: PaymentStatus | None  # None: a settled intent keeps its status
    settles: bool = False
    overpaid: bool = False  # settled with an excess worth crediting (or that waits for an operator)
    credit_in_review: bool = False  # settled, but what it credits waits for an operator (no fresh rate)
    credits: list[Credit] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)
    dispositions: dict[str, Disposition] = field(default_factory=dict)


def reconcile(
    intent: Intent,
    transfers: list[Transfer],
    expected_token: str | None,
    now: datetime,
    current_price: PriceNow,
    usd_of: UsdOf,
) -> Outcome:
    outcome = Outcome(status=None)
    _review_foreign_assets(intent, transfers, expected_token, outcome)
    _review_reverted_after_use(transfers, outcome)

    on_time, late = _on_time_and_late(intent, transfers, expected_token)
    beyond = Beyond(intent, current_price, usd_of, outcome)
    if not intent.settled:
        _settle_or_underpay(intent, on_time, now, beyond, outcome)
    settled = intent.settled or outcome.settles
    _credit_extras(intent, on_time if settled else [], late, beyond)
    if not intent.settled:
        outcome.status = _status(intent, transfers, on_time, late, now, outcome)
    return outcome


def _on_time_and_late(
    intent: Intent, transfers: list[Transfer], expected_token: str | None
) -> tuple[list[Transfer], list[Transfer]]:
    """The live transfers of the expected asset, split at the deadline."""
    live = [t for t in transfers if t.token == expected_token and t.state != TransferStatus.REVERTED]
    return (
        [t for t in live if t.first_seen_at < intent.expires_at],
        [t for t in live if t.first_seen_at >= intent.expires_at],
    )


def _review_foreign_assets(
    intent: Intent, transfers: list[Transfer], expected_token: str | None, outcome: Outcome
) -> None:
    # Another asset on this address (a token sent to an ETH intent, an unknown contract, dust of an unknown
    # mint): recorded, never counted, and left to an operator, in one item per address while it is open.
    group = f"wrong_asset:{intent.network}:{intent.address}"
    for t in transfers:
        if t.token != expected_token and t.state == TransferStatus.CONFIRMED and t.disposition is None:
            outcome.reviews.append(Review("wrong_asset", f"wrong_asset:{t.key}", t.key, group))
            outcome.dispositions[t.key] = Disposition.REVIEW


def _review_reverted_after_use(transfers: list[Transfer], outcome: Outcome) -> None:
    for t in transfers:
        if t.state == TransferStatus.REVERTED and t.disposition in (Disposition.SETTLEMENT, Disposition.CREDITED):
            outcome.reviews.append(Review(f"reverted_after_{t.disposition.value}", f"reverted:{t.key}", t.key))


def _settle_or_underpay(intent: Intent, on_time: list[Transfer], now: datetime, beyond: "Beyond", outcome: Outcome):
    confirmed = [t for t in on_time if t.state == TransferStatus.CONFIRMED and t.disposition is None]
    total = sum(t.amount for t in confirmed)
    if confirmed and total >= intent.amount:
        # The intent's own amount counts at the locked rate; only the excess is a credit beyond it.
        outcome.settles = True
        outcome.dispositions.update({t.key: Disposition.SETTLEMENT for t in confirmed})
        if intent.purpose == Purpose.TOPUP:
            beyond.topup(confirmed)
        if total > intent.amount:
            outcome.overpaid = beyond.credit(total - intent.amount, "overpayment", f"excess:{intent.id}", confirmed)
        return
    still_arriving = any(t.state in PENDING for t in on_time)
    if confirmed and now >= intent.expires_at and not still_arriving:
        # Deadline passed short: what arrived goes to the balance; the order stays payable. An on-time
        # transfer reported after this credit makes a batch of its own, so the key names the batch.
        beyond.credit(total, "underpayment", f"under:{min(t.key for t in confirmed)}", confirmed)


def _credit_extras(intent: Intent, on_time_extras: list[Transfer], late: list[Transfer], beyond: "Beyond") -> None:
    """Transfers not used to settle: a second on-time one, a late one; each a credit beyond the intent."""
    for t in on_time_extras:
        if beyond.unused(t):
            beyond.credit(t.amount, "overpayment", f"transfer:{t.key}", [t])
    for t in late:
        if beyond.unused(t):
            beyond.credit(t.amount, "late_transfer", f"transfer:{t.key}", [t])


@dataclass
class Beyond:
    """Credits beyond what the intent asked: at the lower of the locked and a fresh current rate, so that a rate
    locked before a fall is never an option on the market. No fresh rate (a stablecoin off its peg has none):
    an operator decides instead."""

    intent: Intent
    current_price: PriceNow
    usd_of: UsdOf
    outcome: Outcome

    def topup(self, transfers: list[Transfer]) -> None:
        """Credit a settled top-up: its USD amount, or less when the rate fell since it was locked (the amount
        asked at the lower of the locked and a fresh current rate), so that top-ups opened before a fall are no
        option on the market either. No fresh rate: an operator decides."""
        price = self.current_price()
        if price is None:
            transfer_key = min(t.key for t in transfers)
            self.outcome.reviews.append(Review("no_fresh_rate", f"no_fresh_rate:topup:{self.intent.id}", transfer_key))
            self.outcome.credit_in_review = True
            return
        worth = self.usd_of(self.intent.amount, min(self.intent.price, price))
        self.outcome.credits.append(
            Credit(min(self.intent.amount_usd_cents, worth), "topup", f"topup:{self.intent.id}")
        )

    def unused(self, t: Transfer) -> bool:
        return t.state == TransferStatus.CONFIRMED and t.disposition is None and t.key not in self.outcome.dispositions

    def credit(self, base_units: int, reason: str, key: str, transfers: list[Transfer]) -> bool:
        """Credit `base_units` received in `transfers`, or queue them for review; True when anything is owed."""
        price = self.current_price()
        if price is None:
            transfer_key = min(t.key for t in transfers)
            self.outcome.reviews.append(Review("no_fresh_rate", f"no_fresh_rate:{key}", transfer_key))
            self._mark(transfers, Disposition.REVIEW)
            return True
        self._mark(transfers, Disposition.CREDITED)
        cents = self.usd_of(base_units, min(self.intent.price, price))
        if cents > 0:
            self.outcome.credits.append(Credit(cents, reason, key))
        return cents > 0

    def _mark(self, transfers: list[Transfer], disposition: Disposition) -> None:
        for t in transfers:
            self.outcome.dispositions.setdefault(t.key, disposition)  # a settling transfer stays one


def _status(
    intent: Intent,
    transfers: list[Transfer],
    on_time: list[Transfer],
    late: list[Transfer],
    now: datetime,
    outcome: Outcome,
) -> PaymentStatus:
    if outcome.settles and outcome.credit_in_review:
        return PaymentStatus.IN_REVIEW
    if outcome.settles:
        return PaymentStatus.OVERPAID if outcome.overpaid else PaymentStatus.SETTLED

    def disposition(t: Transfer) -> Disposition | None:
        return outcome.dispositions.get(t.key, t.disposition)

    if late:
        return PaymentStatus.LATE
    if any(disposition(t) == Disposition.CREDITED for t in on_time):
        return PaymentStatus.UNDERPAID
    # An underpayment without a fresh rate waits for an operator: in review, like any item of the queue.
    if outcome.reviews or any(disposition(t) == Disposition.REVIEW for t in transfers):
        return PaymentStatus.IN_REVIEW
    if now >= intent.expires_at and not on_time:
        return PaymentStatus.EXPIRED
    if any(t.state in (TransferStatus.CONFIRMING, TransferStatus.CONFIRMED) for t in on_time):
        return PaymentStatus.CONFIRMING
    if on_time:
        return PaymentStatus.SEEN
    return PaymentStatus.AWAITING_TRANSFER
