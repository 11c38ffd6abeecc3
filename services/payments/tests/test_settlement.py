"""Settlement in memory: chain events applied to intents, the credits, reviews and events they cause.

One 100.00 USD intent for 0.002 BTC (200,000 sat) locked at 50,000 USD/BTC, 2 confirmations required; one
satoshi is 0.05 cent at the locked rate, 0.04 at 40,000 and 0.06 at 60,000.
"""

from datetime import UTC, datetime, timedelta
from fractions import Fraction

import pytest

from kernodeck_contracts.events import (
    BalanceCredited,
    PaymentSettled,
    PaymentStatusChanged,
    TransferConfirmed,
    TransferReverted,
    TransferSeen,
)
from kernodeck_contracts.statuses import PaymentStatus, TransferStatus
from kernodeck_payments.domain.intents import PaymentIntent, address_key
from kernodeck_payments.use_cases.settlement import apply_transfers, sweep
from services.payments.tests.memory import MemorySettlement, settlement_units

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
DEADLINE = T0 + timedelta(minutes=30)
ADDRESS = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
FALLING, RISING = Fraction(40_000), Fraction(60_000)
STATES = {
    TransferSeen: TransferStatus.SEEN,
    TransferConfirmed: TransferStatus.CONFIRMED,
    TransferReverted: TransferStatus.REVERTED,
}


def intent(purpose: str = "order", **changes) -> PaymentIntent:
    fields = dict(
        id="pi1", purpose=purpose, account_id="acc1", reference_id="o1", asset="BTC", network="bitcoin",
        address=ADDRESS, address_key=address_key("bitcoin", ADDRESS), amount=200_000, amount_usd_cents=10_000,
        rate="50000", rate_source="file", required_confirmations=2, status="awaiting_transfer",
        expires_at=DEADLINE, watch_until=DEADLINE + timedelta(days=7), created_at=T0, updated_at=T0,
    )  # fmt: skip
    return PaymentIntent(**{**fields, **changes})


class Watcher:
    """A watcher's events, each with the next sequence, applied at once."""

    def __init__(self, units):
        self.units = units
        self.sequence = 0

    def send(self, kind, amount: int, tx: str = "tx1", at: datetime = T0, confirmations: int = 2, **fields):
        self.sequence += 1
        event = kind(
            network="bitcoin", txid=tx, index=0, address=fields.pop("address", ADDRESS), amount=amount,
            confirmations=confirmations if kind is TransferConfirmed else 0, sequence=self.sequence,
            occurred_at=at, block_height=100 if kind is TransferConfirmed else None, **fields,
        )  # fmt: skip
        apply_transfers(self.units, [(event, STATES[kind])], fields.get("now", at))
        return event


def setup(price: Fraction | None = Fraction(50_000), **changes):
    units = settlement_units(intent(**changes), BTC=price)
    return units, Watcher(units)


def credits(units) -> list[tuple[int, str]]:
    return [(e.amount_usd_cents, e.reason) for e in units.of(BalanceCredited)]


def status(units) -> str:
    return units.state.intents["pi1"].status


def test_an_exact_payment_is_seen_then_settles_the_order_once():
    units, watcher = setup()
    watcher.send(TransferSeen, 200_000)
    assert status(units) == "seen"
    watcher.send(TransferConfirmed, 200_000)
    assert status(units) == "settled"
    [settled] = units.of(PaymentSettled)
    assert (settled.order_id, settled.amount_usd_cents, settled.method) == ("o1", 10_000, "BTC/bitcoin")
    assert units.state.ledger == {"order-payment:pi1": ("sales:orders", 10_000, "order_payment")}
    assert [(e.previous_status, e.status) for e in units.of(PaymentStatusChanged)] == [
        ("awaiting_transfer", "seen"),
        ("seen", "settled"),
    ]
    assert credits(units) == [] and units.state.reviews == {}


def test_an_extensions_payment_settles_the_extension_of_its_order():
    units, watcher = setup(purpose="extension", reference_id="x1", order_id="o1")
    watcher.send(TransferConfirmed, 200_000)
    [settled] = units.of(PaymentSettled)
    assert (settled.order_id, settled.extension_id, settled.amount_usd_cents) == ("o1", "x1", 10_000)
    assert units.state.ledger == {"extension-payment:pi1": ("sales:orders", 10_000, "order_payment")}
    assert {(e.order_id, e.extension_id, e.purpose) for e in units.of(PaymentStatusChanged)} == {
        ("o1", "x1", "extension")
    }


def test_fewer_confirmations_than_required_are_still_confirming():
    units, watcher = setup()
    watcher.send(TransferConfirmed, 200_000, confirmations=1)
    assert status(units) == "confirming" and units.of(PaymentSettled) == []
    watcher.send(TransferConfirmed, 200_000, confirmations=2)
    assert status(units) == "settled"


def test_the_same_event_twice_and_an_older_one_change_nothing():
    units, watcher = setup()
    newer = watcher.send(TransferConfirmed, 200_000)
    apply_transfers(units, [(newer, TransferStatus.CONFIRMED)], T0)  # redelivered
    older = TransferSeen(**{**newer.model_dump(), "sequence": newer.sequence - 1, "event_id": "other"})
    apply_transfers(units, [(older, TransferStatus.SEEN)], T0)
    assert len(units.of(PaymentSettled)) == 1 and status(units) == "settled"
    assert units.state.transfers[("bitcoin", "tx1", 0)].state == "confirmed"


# --- credits beyond the intent: at the lower of the locked and a fresh rate -----------------------------


@pytest.mark.parametrize(("price", "cents"), [(FALLING, 4_000), (RISING, 5_000)], ids=["falling", "rising"])
def test_an_overpayment_settles_and_credits_the_excess_at_the_lower_rate(price, cents):
    units, watcher = setup(price)
    watcher.send(TransferConfirmed, 300_000)
    assert status(units) == "overpaid"
    assert credits(units) == [(cents, "overpayment")] and units.state.balances == {"acc1": cents}
    assert len(units.of(PaymentSettled)) == 1


@pytest.mark.parametrize(("price", "cents"), [(FALLING, 4_000), (RISING, 5_000)], ids=["falling", "rising"])
def test_an_underpayment_is_credited_at_the_lower_rate_when_the_deadline_passes(price, cents):
    units, watcher = setup(price)
    watcher.send(TransferConfirmed, 100_000)
    assert sweep(units, DEADLINE - timedelta(seconds=1), 10) == 0  # before the deadline: nothing to decide
    assert sweep(units, DEADLINE, 10) == 1
    assert status(units) == "underpaid" and credits(units) == [(cents, "underpayment")]
    assert sweep(units, DEADLINE + timedelta(minutes=1), 10) == 0
    assert credits(units) == [(cents, "underpayment")]


@pytest.mark.parametrize(("price", "cents"), [(FALLING, 4_000), (RISING, 5_000)], ids=["falling", "rising"])
def test_a_second_transfer_after_settlement_is_credited_at_the_lower_rate(price, cents):
    units, watcher = setup(price)
    watcher.send(TransferConfirmed, 200_000)
    watcher.send(TransferConfirmed, 100_000, tx="tx2", at=T0 + timedelta(minutes=5))
    assert status(units) == "settled" and credits(units) == [(cents, "overpayment")]


@pytest.mark.parametrize(("price", "cents"), [(FALLING, 4_000), (RISING, 5_000)], ids=["falling", "rising"])
def test_a_late_transfer_is_credited_at_the_lower_rate(price, cents):
    units, watcher = setup(price)
    watcher.send(TransferConfirmed, 100_000, at=DEADLINE)
    assert status(units) == "late" and credits(units) == [(cents, "late_transfer")]
    assert units.of(PaymentSettled) == []


def test_a_topup_and_its_excess_are_credited_at_the_lower_rate():
    units, watcher = setup(FALLING, purpose="topup", reference_id="t1")
    watcher.send(TransferConfirmed, 300_000)
    assert credits(units) == [(8_000, "topup"), (4_000, "overpayment")]
    assert units.of(PaymentSettled) == []  # a top-up pays no order


@pytest.mark.parametrize(
    ("amount", "at", "expected"),
    [(300_000, T0, "overpaid"), (100_000, DEADLINE, "late")],
    ids=["over", "late"],
)
def test_a_credit_beyond_the_intent_without_a_fresh_rate_waits_for_an_operator(amount, at, expected):
    units, watcher = setup(None)
    watcher.send(TransferConfirmed, amount, at=at)
    assert status(units) == expected and credits(units) == [] and units.state.balances == {}
    [(reason, intent_id, transfer)] = units.state.reviews.values()
    assert (reason, intent_id, transfer) == ("no_fresh_rate", "pi1", "bitcoin:tx1:0")
    assert sweep(units, DEADLINE + timedelta(hours=1), 10) == 0  # queued once, nothing left to decide


def test_an_underpayment_without_a_fresh_rate_is_in_review():
    units, watcher = setup(None)
    watcher.send(TransferConfirmed, 100_000)
    sweep(units, DEADLINE, 10)
    assert status(units) == "in_review" and credits(units) == []
    assert [reason for reason, _, _ in units.state.reviews.values()] == ["no_fresh_rate"]


# --- what goes to review -------------------------------------------------------------------------------


def test_a_transfer_to_an_address_nobody_owns_is_reviewed_once_confirmed():
    units, watcher = setup()
    other = "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"
    watcher.send(TransferSeen, 5_000, address=other)
    assert units.state.reviews == {}
    watcher.send(TransferConfirmed, 5_000, address=other)
    assert units.state.reviews == {"unknown_address:bitcoin:tx1:0": ("unknown_address", None, "bitcoin:tx1:0")}


def test_a_transfer_reverted_after_settlement_goes_to_review_and_the_order_stays_paid():
    units, watcher = setup()
    watcher.send(TransferConfirmed, 200_000)
    watcher.send(TransferReverted, 200_000)
    assert status(units) == "settled" and len(units.of(PaymentSettled)) == 1
    assert [reason for reason, _, _ in units.state.reviews.values()] == ["reverted_after_settlement"]


def test_an_intent_with_nothing_received_expires_at_the_sweep_and_is_told_once():
    units, _ = setup()
    assert sweep(units, DEADLINE, 10) == 1
    assert sweep(units, DEADLINE + timedelta(minutes=1), 10) == 0
    assert status(units) == PaymentStatus.EXPIRED
    assert [(e.previous_status, e.status) for e in units.of(PaymentStatusChanged)] == [("awaiting_transfer", "expired")]


# --- a block's transfers together ---------------------------------------------------------------------------


def block_of(count: int, kind=TransferConfirmed, first_sequence: int = 1) -> list[tuple]:
    """`count` transfers of one transaction, output i paying intent pi<i>'s address, as one batch."""
    common = dict(network="bitcoin", txid="block-tx", amount=200_000, confirmations=2, occurred_at=T0)
    return [
        (
            kind(**common, index=i, address=f"bc1qaddress{i}", sequence=first_sequence + i, block_height=100),
            STATES[kind],
        )
        for i in range(count)
    ]


def many_intents(count: int):
    intents = [
        intent(
            id=f"pi{i}",
            reference_id=f"o{i}",
            address=f"bc1qaddress{i}",
            address_key=address_key("bitcoin", f"bc1qaddress{i}"),
        )
        for i in range(count)
    ]
    return settlement_units(*intents, BTC=Fraction(50_000))


def test_a_block_of_transfers_settles_every_intent_once_in_one_unit():
    units = many_intents(5)
    batch = block_of(5)
    apply_transfers(units, batch, T0)
    [(stranger, _)] = block_of(1, first_sequence=9)
    stranger = stranger.model_copy(update={"txid": "other-tx", "address": "bc1qnobody"})
    apply_transfers(units, [*batch[1:3], (stranger, TransferStatus.CONFIRMED)], T0)
    assert sorted(e.order_id for e in units.of(PaymentSettled)) == [f"o{i}" for i in range(5)]  # each once
    assert {i.status for i in units.state.intents.values()} == {"settled"}
    assert units.state.reviews.keys() == {"unknown_address:bitcoin:other-tx:0"}  # the new one, in the same unit


def test_in_a_batch_the_newest_of_a_transfers_events_wins_whatever_their_order_of_arrival():
    units = many_intents(1)
    [(seen, _)] = block_of(1, TransferSeen, first_sequence=1)
    [(reverted, _)] = block_of(1, TransferReverted, first_sequence=2)
    apply_transfers(units, [(reverted, TransferStatus.REVERTED), (seen, TransferStatus.SEEN)], T0)
    assert units.state.transfers[("bitcoin", "block-tx", 0)].state == "reverted"
    assert units.state.intents["pi0"].status != "settled" and units.of(PaymentSettled) == []


def test_a_batch_that_fails_in_the_middle_leaves_nothing_and_settles_every_intent_once_when_applied_again():
    units = many_intents(4)
    batch = block_of(4)
    real_book = MemorySettlement.book_order_payment
    booked = []

    def book_then_fail_on_the_third(self, cents, order_id, key, now):
        booked.append(order_id)
        if len(booked) == 3:
            raise ConnectionError("the database went away")  # a restart in the middle of the batch
        real_book(self, cents, order_id, key, now)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MemorySettlement, "book_order_payment", book_then_fail_on_the_third)
        with pytest.raises(ConnectionError):
            apply_transfers(units, batch, T0)
    assert units.of(PaymentSettled) == [] and units.state.transfers == {} and units.state.ledger == {}
    apply_transfers(units, batch, T0)  # redelivered whole
    assert [e.order_id for e in units.of(PaymentSettled)] == ["o0", "o1", "o2", "o3"]
    assert len(units.state.ledger) == 4
