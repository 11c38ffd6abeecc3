"""The reconciliation matrix, rule by rule, on plain data."""

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from fractions import Fraction

import pytest

from kernodeck_contracts.statuses import PaymentStatus, TransferStatus
from kernodeck_payments.domain.intents import Disposition, Intent, Purpose, Transfer
from kernodeck_payments.domain.reconcile import reconcile

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
DEADLINE = T0 + timedelta(minutes=30)
SAT = 10**8
USDT = "0xdAC17F958D2ee523a2206206994597C13D831ec7"


def usd_of_btc(base_units: int, price: Fraction) -> int:
    return math.floor(Fraction(base_units, SAT) * price * 100)


INTENT = Intent(
    id="pi1",
    purpose=Purpose.ORDER,
    account_id="a1",
    reference_id="o1",
    asset="BTC",
    network="bitcoin",
    address="bcrt1qexample",
    amount=200_000,  # 0.002 BTC at 50,000 USD = 100.00 USD
    amount_usd_cents=10_000,
    rate="50000",
    expires_at=DEADLINE,
    required_confirmations=2,
)


def transfer(n: int, amount: int, state=TransferStatus.CONFIRMED, seen=T0, token=None, disposition=None) -> Transfer:
    return Transfer(
        network="bitcoin", txid=f"tx{n}", index=0, token=token, amount=amount,
        confirmations=2 if state == TransferStatus.CONFIRMED else 0, state=state,
        first_seen_at=seen, disposition=disposition,
    )  # fmt: skip


def run(transfers, now=T0 + timedelta(minutes=5), intent=INTENT, price=Fraction(50_000), token=None):
    return reconcile(intent, transfers, token, now, lambda: price, usd_of_btc)


def test_nothing_yet_is_awaiting_transfer():
    assert run([]).status == PaymentStatus.AWAITING_TRANSFER


def test_a_mempool_transfer_is_seen_and_settles_nothing():
    outcome = run([transfer(1, 200_000, TransferStatus.SEEN)])
    assert (outcome.status, outcome.settles, outcome.credits) == (PaymentStatus.SEEN, False, [])


def test_in_a_block_below_required_confirmations_is_confirming():
    assert run([transfer(1, 200_000, TransferStatus.CONFIRMING)]).status == PaymentStatus.CONFIRMING


def test_exact_confirmed_payment_settles_an_order_without_credit():
    outcome = run([transfer(1, 200_000)])
    assert outcome.settles and outcome.status == PaymentStatus.SETTLED
    assert outcome.credits == []
    assert outcome.dispositions == {"bitcoin:tx1:0": Disposition.SETTLEMENT}


def test_one_base_unit_short_does_not_settle():
    outcome = run([transfer(1, 199_999)])
    assert not outcome.settles and outcome.status == PaymentStatus.CONFIRMING


def test_partial_transfers_add_up():
    first = run([transfer(1, 120_000)])
    assert not first.settles
    both = run([transfer(1, 120_000), transfer(2, 80_000)])
    assert both.settles and set(both.dispositions) == {"bitcoin:tx1:0", "bitcoin:tx2:0"}


def test_only_confirmed_amounts_settle():
    outcome = run([transfer(1, 120_000), transfer(2, 80_000, TransferStatus.CONFIRMING)])
    assert not outcome.settles and outcome.status == PaymentStatus.CONFIRMING


def test_overpayment_settles_and_credits_the_excess():
    outcome = run([transfer(1, 300_000)])
    assert outcome.settles and outcome.status == PaymentStatus.OVERPAID
    assert [(c.cents, c.reason, c.key) for c in outcome.credits] == [(5_000, "overpayment", "excess:pi1")]


def test_an_excess_worth_less_than_a_cent_settles_without_a_credit():
    outcome = run([transfer(1, 200_019)])  # 19 sat at 0.05 cent each: 0.95 cent
    assert outcome.settles and outcome.status == PaymentStatus.SETTLED and outcome.credits == []


def test_a_topup_settles_by_crediting_its_amount():
    outcome = run([transfer(1, 200_000)], intent=replace(INTENT, purpose=Purpose.TOPUP))
    assert [(c.cents, c.reason, c.key) for c in outcome.credits] == [(10_000, "topup", "topup:pi1")]


@pytest.mark.parametrize(
    ("price", "cents"),
    [(Fraction(60_000), 10_000), (Fraction(50_000), 10_000), (Fraction("49999.99"), 9_999), (Fraction(45_000), 9_000)],
    ids=["risen", "at-the-locked-rate", "a-cent-below", "fallen"],
)
def test_a_topup_is_credited_at_the_lower_of_the_locked_and_the_current_rate(price, cents):
    outcome = run([transfer(1, 200_000)], intent=replace(INTENT, purpose=Purpose.TOPUP), price=price)
    assert outcome.settles and outcome.status == PaymentStatus.SETTLED
    assert [(c.cents, c.reason, c.key) for c in outcome.credits] == [(cents, "topup", "topup:pi1")]


def test_a_topup_without_a_fresh_rate_settles_and_waits_for_an_operator():
    topup = replace(INTENT, purpose=Purpose.TOPUP)
    outcome = run([transfer(1, 200_000)], intent=topup, price=None)
    assert outcome.settles and outcome.status == PaymentStatus.IN_REVIEW and outcome.credits == []
    assert [(r.reason, r.key, r.transfer_key) for r in outcome.reviews] == [
        ("no_fresh_rate", "no_fresh_rate:topup:pi1", "bitcoin:tx1:0")
    ]


def test_deadline_with_nothing_is_expired():
    assert run([], now=DEADLINE).status == PaymentStatus.EXPIRED
    assert run([], now=DEADLINE - timedelta(microseconds=1)).status == PaymentStatus.AWAITING_TRANSFER


def test_underpayment_at_the_deadline_credits_what_arrived_and_leaves_the_order_payable():
    before = run([transfer(1, 100_000)], now=DEADLINE - timedelta(seconds=1))
    assert before.credits == [] and before.status == PaymentStatus.CONFIRMING
    outcome = run([transfer(1, 100_000)], now=DEADLINE)
    assert not outcome.settles and outcome.status == PaymentStatus.UNDERPAID
    assert [(c.cents, c.reason, c.key) for c in outcome.credits] == [(5_000, "underpayment", "under:bitcoin:tx1:0")]
    assert outcome.dispositions == {"bitcoin:tx1:0": Disposition.CREDITED}


def test_an_on_time_transfer_reported_after_an_underpayment_is_credited_under_a_key_of_its_own():
    # A lagging watcher reports tx2, first seen before the deadline, after the sweep credited tx1.
    credited = transfer(1, 100_000, disposition=Disposition.CREDITED)
    outcome = run([credited, transfer(2, 40_000)], now=DEADLINE + timedelta(minutes=10))
    assert [(c.cents, c.reason, c.key) for c in outcome.credits] == [(2_000, "underpayment", "under:bitcoin:tx2:0")]
    assert outcome.dispositions == {"bitcoin:tx2:0": Disposition.CREDITED}


def test_a_transfer_seen_before_the_deadline_still_settles_when_it_confirms_after():
    waiting = run(
        [transfer(1, 200_000, TransferStatus.CONFIRMING, seen=DEADLINE - timedelta(minutes=1))],
        now=DEADLINE + timedelta(minutes=20),
    )
    assert waiting.status == PaymentStatus.CONFIRMING and waiting.credits == []
    done = run([transfer(1, 200_000, seen=DEADLINE - timedelta(minutes=1))], now=DEADLINE + timedelta(minutes=40))
    assert done.settles


def test_underpaid_waits_for_a_partial_still_confirming_after_the_deadline():
    outcome = run([transfer(1, 100_000), transfer(2, 50_000, TransferStatus.CONFIRMING)], now=DEADLINE)
    assert outcome.credits == [] and outcome.status == PaymentStatus.CONFIRMING


@pytest.mark.parametrize(("current", "credited"), [(Fraction(40_000), 8_000), (Fraction(60_000), 10_000)])
def test_a_late_transfer_is_credited_at_the_lower_of_locked_and_current_rate(current, credited):
    late = transfer(1, 200_000, seen=DEADLINE + timedelta(minutes=3))
    outcome = run([late], now=DEADLINE + timedelta(minutes=10), price=current)
    assert not outcome.settles and outcome.status == PaymentStatus.LATE
    assert [(c.cents, c.reason, c.key) for c in outcome.credits] == [
        (credited, "late_transfer", "transfer:bitcoin:tx1:0")
    ]


def test_a_late_transfer_without_a_current_rate_goes_to_review():
    late = transfer(1, 200_000, seen=DEADLINE + timedelta(minutes=3))
    outcome = run([late], now=DEADLINE + timedelta(minutes=10), price=None)
    assert outcome.credits == [] and outcome.status == PaymentStatus.LATE
    assert [(r.reason, r.key, r.transfer_key) for r in outcome.reviews] == [
        ("no_fresh_rate", "no_fresh_rate:transfer:bitcoin:tx1:0", "bitcoin:tx1:0")
    ]
    assert outcome.dispositions == {"bitcoin:tx1:0": Disposition.REVIEW}


LATE = DEADLINE + timedelta(minutes=3)


@pytest.mark.parametrize(
    ("transfers", "calls"),
    [
        pytest.param([transfer(1, 200_000)], 0, id="exact"),
        pytest.param([transfer(1, 300_000)], 1, id="over"),
        pytest.param([transfer(1, 200_000, seen=LATE)], 1, id="late"),
        pytest.param([transfer(1, 100_000), transfer(2, 100_000, seen=LATE)], 2, id="under_and_late"),
        pytest.param([transfer(1, 200_000, seen=LATE, disposition=Disposition.CREDITED)], 0, id="late_credited"),
        pytest.param([transfer(1, 200_000, TransferStatus.CONFIRMING, seen=LATE)], 0, id="late_confirming"),
        pytest.param([transfer(1, 200_000, TransferStatus.REVERTED, seen=LATE)], 0, id="late_reverted"),
        pytest.param([transfer(1, 200_000, seen=LATE, token=USDT)], 0, id="late_other_asset"),
    ],
)
def test_the_current_price_is_asked_only_for_a_credit_beyond_the_intent(transfers, calls):
    asked = []

    def current_price():
        asked.append(1)
        return Fraction(40_000)

    reconcile(INTENT, transfers, None, DEADLINE + timedelta(minutes=10), current_price, usd_of_btc)
    assert len(asked) == calls


def test_a_second_transfer_after_settlement_is_credited():
    settled = replace(INTENT, settled=True)
    used = transfer(1, 200_000, disposition=Disposition.SETTLEMENT)
    outcome = run([used, transfer(2, 100_000, seen=T0 + timedelta(minutes=8))], intent=settled)
    assert outcome.status is None and not outcome.settles
    assert [(c.cents, c.reason) for c in outcome.credits] == [(5_000, "overpayment")]
    assert outcome.dispositions == {"bitcoin:tx2:0": Disposition.CREDITED}


def test_a_late_second_transfer_after_settlement_uses_the_lower_rate():
    settled = replace(INTENT, settled=True)
    used = transfer(1, 200_000, disposition=Disposition.SETTLEMENT)
    outcome = run(
        [used, transfer(2, 100_000, seen=DEADLINE + timedelta(hours=1))],
        intent=settled,
        price=Fraction(30_000),
        now=DEADLINE + timedelta(hours=2),
    )
    assert [(c.cents, c.reason) for c in outcome.credits] == [(3_000, "late_transfer")]


def test_another_asset_on_the_address_goes_to_review_and_never_counts():
    wrong = transfer(1, 200_000_000, token=USDT)
    outcome = run([wrong])
    assert not outcome.settles and outcome.status == PaymentStatus.IN_REVIEW
    assert [(r.reason, r.key) for r in outcome.reviews] == [("wrong_asset", "wrong_asset:bitcoin:tx1:0")]


def test_foreign_transfers_on_one_address_share_the_addresss_review_group():
    outcome = run([transfer(1, 1, token=USDT), transfer(2, 1, token="0xdead")])
    assert {r.group for r in outcome.reviews} == {"wrong_asset:bitcoin:bcrt1qexample"}
    assert [r.key for r in outcome.reviews] == ["wrong_asset:bitcoin:tx1:0", "wrong_asset:bitcoin:tx2:0"]


def test_a_token_from_an_unknown_contract_goes_to_review_on_a_token_intent():
    fake = transfer(1, 100_000_000, token="0x000000000000000000000000000000000000dead")
    outcome = run([fake], token=USDT)
    assert outcome.status == PaymentStatus.IN_REVIEW and outcome.reviews[0].reason == "wrong_asset"


def test_the_right_token_settles_a_token_intent():
    usdt = replace(INTENT, asset="USDT", network="ethereum", amount=100_000_000, rate="1")
    outcome = reconcile(
        usdt, [transfer(1, 100_000_000, token=USDT)], USDT, T0, lambda: Fraction(1), lambda b, p: b * p * 100 // 10**6
    )
    assert outcome.settles


def test_a_reverted_transfer_before_settlement_stops_counting():
    outcome = run([transfer(1, 120_000), transfer(2, 80_000, TransferStatus.REVERTED)])
    assert not outcome.settles and outcome.reviews == [] and outcome.status == PaymentStatus.CONFIRMING


def test_a_mempool_transfer_withdrawn_leaves_the_intent_awaiting():
    assert run([transfer(1, 200_000, TransferStatus.REVERTED)]).status == PaymentStatus.AWAITING_TRANSFER


@pytest.mark.parametrize("disposition", [Disposition.SETTLEMENT, Disposition.CREDITED])
def test_a_reverted_transfer_after_it_was_used_goes_to_review(disposition):
    intent = replace(INTENT, settled=disposition == Disposition.SETTLEMENT)
    outcome = run([transfer(1, 200_000, TransferStatus.REVERTED, disposition=disposition)], intent=intent, now=DEADLINE)
    assert [(r.reason, r.key) for r in outcome.reviews] == [
        (f"reverted_after_{disposition.value}", "reverted:bitcoin:tx1:0")
    ]
    assert outcome.credits == []


def test_running_twice_on_the_updated_transfers_does_nothing_more():
    first = run([transfer(1, 300_000)])
    applied = [transfer(1, 300_000, disposition=first.dispositions["bitcoin:tx1:0"])]
    second = run(applied, intent=replace(INTENT, settled=True))
    assert second.credits == [] and second.reviews == [] and not second.settles


# --- the rate of a credit: the intent's own amount at the locked rate, anything beyond it at the lower of
# the locked (50,000) and a fresh rate; no fresh rate: an operator decides -------------------------------

FALLING, RISING = Fraction(40_000), Fraction(60_000)
AFTER = DEADLINE + timedelta(minutes=10)
SECOND = [transfer(1, 200_000, disposition=Disposition.SETTLEMENT), transfer(2, 100_000)]


@pytest.mark.parametrize(
    ("case", "transfers", "intent", "now", "price", "credits", "status"),
    [
        ("exact", [transfer(1, 200_000)], INTENT, T0, FALLING, [], PaymentStatus.SETTLED),
        ("exact", [transfer(1, 200_000)], INTENT, T0, RISING, [], PaymentStatus.SETTLED),
        ("over", [transfer(1, 300_000)], INTENT, T0, FALLING, [(4_000, "overpayment")], PaymentStatus.OVERPAID),
        ("over", [transfer(1, 300_000)], INTENT, T0, RISING, [(5_000, "overpayment")], PaymentStatus.OVERPAID),
        (
            "under",
            [transfer(1, 100_000)],
            INTENT,
            DEADLINE,
            FALLING,
            [(4_000, "underpayment")],
            PaymentStatus.UNDERPAID,
        ),
        ("under", [transfer(1, 100_000)], INTENT, DEADLINE, RISING, [(5_000, "underpayment")], PaymentStatus.UNDERPAID),
        ("second", SECOND, replace(INTENT, settled=True), T0, FALLING, [(4_000, "overpayment")], None),
        ("second", SECOND, replace(INTENT, settled=True), T0, RISING, [(5_000, "overpayment")], None),
        (
            "late",
            [transfer(1, 100_000, seen=LATE)],
            INTENT,
            AFTER,
            FALLING,
            [(4_000, "late_transfer")],
            PaymentStatus.LATE,
        ),
        (
            "late",
            [transfer(1, 100_000, seen=LATE)],
            INTENT,
            AFTER,
            RISING,
            [(5_000, "late_transfer")],
            PaymentStatus.LATE,
        ),
        (
            "topup",
            [transfer(1, 300_000)],
            replace(INTENT, purpose=Purpose.TOPUP),
            T0,
            FALLING,
            [(8_000, "topup"), (4_000, "overpayment")],
            PaymentStatus.OVERPAID,
        ),
        (
            "topup",
            [transfer(1, 300_000)],
            replace(INTENT, purpose=Purpose.TOPUP),
            T0,
            RISING,
            [(10_000, "topup"), (5_000, "overpayment")],
            PaymentStatus.OVERPAID,
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_credits_beyond_the_intent_use_the_lower_of_the_locked_and_a_fresh_rate(
    case, transfers, intent, now, price, credits, status
):  # fmt: skip
    outcome = run(transfers, now=now, intent=intent, price=price)
    assert [(c.cents, c.reason) for c in outcome.credits] == credits
    assert outcome.status == status and outcome.reviews == []


@pytest.mark.parametrize(
    ("case", "transfers", "intent", "now", "status"),
    [
        ("over", [transfer(1, 300_000)], INTENT, T0, PaymentStatus.OVERPAID),
        ("under", [transfer(1, 100_000)], INTENT, DEADLINE, PaymentStatus.IN_REVIEW),
        ("second", SECOND, replace(INTENT, settled=True), T0, None),
        ("late", [transfer(1, 100_000, seen=LATE)], INTENT, AFTER, PaymentStatus.LATE),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_credit_beyond_the_intent_without_a_fresh_rate_goes_to_review(case, transfers, intent, now, status):
    outcome = run(transfers, now=now, intent=intent, price=None)
    assert outcome.credits == [] and outcome.status == status
    assert [r.reason for r in outcome.reviews] == ["no_fresh_rate"]
    again = run(
        [replace(t, disposition=outcome.dispositions.get(t.key, t.disposition)) for t in transfers],
        now=now,
        intent=replace(intent, settled=intent.settled or outcome.settles),
        price=None,
    )
    assert again.reviews == [] and again.credits == []  # queued once


def test_an_exact_payment_settles_without_a_fresh_rate():
    outcome = run([transfer(1, 200_000)], price=None)
    assert outcome.settles and outcome.credits == [] and outcome.reviews == []
