"""Opening payment instructions, in memory: the locked rate and amount, fresh addresses, refusals that leave nothing."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import AddressWatched, PaymentInstructionsCreated
from kernodeck_payments.availability import MethodBoard
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.intents import PaymentIntent, PaymentRequest, Purpose
from kernodeck_payments.domain.methods import METHODS, find_method
from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.use_cases.intake import open_payment, open_topup
from services.payments.tests.conftest import RATES, TEST_KEYS
from services.payments.tests.memory import intake_units

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
SETTINGS = PaymentsSettings(**{f"{network}_xpub": key for network, key in TEST_KEYS.items()})
POOL = ["9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", "HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH"]
BTC = find_method("BTC", "bitcoin")


def board(switched_off=(), missing_rates=(), lagging=()) -> MethodBoard:
    rates = {
        symbol: None if symbol in missing_rates else Rate(symbol, usd, "file", T0) for symbol, usd in RATES.items()
    }
    switched_on = {(m.asset, m.network): (m.asset, m.network) not in switched_off for m in METHODS}
    return MethodBoard(switched_on, rates, frozenset(lagging), len(POOL))


def open_one(units, method=BTC, reference="o1", cents=18_900, purpose=Purpose.ORDER) -> PaymentIntent:
    return open_payment(units, SETTINGS, PaymentRequest(method, purpose, "acc1", reference, cents), T0)


def test_an_intent_locks_the_rate_and_the_amount_and_watches_a_fresh_address():
    units = intake_units(board())
    intent = open_one(units)
    assert (intent.amount, intent.rate, intent.amount_usd_cents) == (378_000, "50000", 18_900)  # 189 USD at 50,000
    assert (intent.address, intent.derivation_index) == ("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", 0)
    assert intent.expires_at == T0 + timedelta(minutes=30)
    assert intent.watch_until == T0 + timedelta(minutes=30) + timedelta(days=7)
    assert (intent.required_confirmations, intent.token, intent.status) == (2, None, "awaiting_transfer")
    [watched] = units.of(AddressWatched)
    assert (watched.address, watched.payment_id, watched.watch_until) == (intent.address, intent.id, intent.watch_until)


def test_the_customer_is_told_what_to_send_for_an_order_and_for_a_topup():
    units = intake_units(board())
    order = open_one(units)
    topup = open_one(units, find_method("USDT", "tron"), "t1", 10_000, Purpose.TOPUP)
    told = [event.model_dump(exclude={"event_id", "occurred_at"}) for event in units.of(PaymentInstructionsCreated)]
    common = {"account_id": "acc1", "extension_id": None, "expires_at": T0 + timedelta(minutes=30)}
    assert told == [
        {
            **common,
            "payment_id": order.id,
            "purpose": "order",
            "order_id": "o1",
            "topup_id": None,
            "asset": "BTC",
            "network": "bitcoin",
            "amount": "0.00378",
            "amount_base_units": 378_000,
            "amount_usd_cents": 18_900,
        },
        {
            **common,
            "payment_id": topup.id,
            "purpose": "topup",
            "order_id": None,
            "topup_id": "t1",
            "asset": "USDT",
            "network": "tron",
            "amount": "100",
            "amount_base_units": 100_000_000,
            "amount_usd_cents": 10_000,
        },
    ]


def test_each_intent_takes_the_next_index_of_its_network():
    units = intake_units(board())
    indexes = [open_one(units, reference=f"o{n}").derivation_index for n in range(3)]
    assert indexes == [0, 1, 2]
    assert open_one(units, method=find_method("LTC", "litecoin")).derivation_index == 0


def test_a_token_intent_names_its_contract():
    intent = open_one(intake_units(board()), method=find_method("USDT", "tron"))
    assert (intent.token, intent.amount) == ("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", 189_000_000)


def test_a_topup_is_recorded_with_its_intent():
    units = intake_units(board())
    topup, intent = open_topup(units, SETTINGS, "acc1", 10_000, "BTC", "bitcoin", T0)
    assert (list(units.state.topups), list(units.state.intents)) == ([topup.id], [intent.id])
    assert (intent.purpose, intent.reference_id, topup.amount_usd_cents) == (Purpose.TOPUP, topup.id, 10_000)


def test_a_topup_refused_leaves_nothing():
    units = intake_units(board(missing_rates={"BTC"}))
    with pytest.raises(ServiceError):
        open_topup(units, SETTINGS, "acc1", 10_000, "BTC", "bitcoin", T0)
    with pytest.raises(ServiceError) as caught:
        open_topup(units, SETTINGS, "acc1", 12_345, "NOPE", "nowhere", T0)  # the amount is checked first
    assert caught.value.detail == "a top-up is 100, 500, 2000 or 10000 USD"
    assert (units.state.topups, units.state.intents, units.emitted) == ({}, {}, [])


@pytest.mark.parametrize(
    ("state", "code", "detail"),
    [
        (board(missing_rates={"BTC"}), "rate_unavailable", "no valid BTC exchange rate right now; try again shortly"),
        (board(switched_off={("BTC", "bitcoin")}), "method_unavailable", "BTC on bitcoin is unavailable: disabled"),
        (board(lagging={"bitcoin"}), "method_unavailable", "BTC on bitcoin is unavailable: chain_lagging"),
    ],
    ids=["no rate", "switched off", "chain lagging"],
)
def test_an_unavailable_method_gives_no_instructions_and_uses_no_index(state, code, detail):
    units = intake_units(state)
    with pytest.raises(ServiceError) as caught:
        open_one(units)
    assert (caught.value.code, caught.value.detail) == (code, detail)
    assert (units.state.topups, units.state.intents, units.state.next_index, units.emitted) == ({}, {}, {}, [])


def test_solana_addresses_come_from_the_pool_until_it_is_empty():
    units = intake_units(board(), POOL)
    sol = find_method("SOL", "solana")
    assert [open_one(units, method=sol, reference=f"o{n}").address for n in range(2)] == POOL
    with pytest.raises(ServiceError) as caught:
        open_one(units, method=sol, reference="o3")
    assert (caught.value.code, caught.value.detail) == (
        "method_unavailable",
        "SOL on solana is unavailable: address_pool_empty",
    )


# --- how many payments anyone may hold open ---------------------------------------------------------------

LIMITED = SETTINGS.model_copy(update={"open_intents_per_order": 2, "open_intents_per_account": 3})
LTC, ETH = find_method("LTC", "litecoin"), find_method("ETH", "ethereum")


def open_limited(units, method=BTC, reference="o1", now=T0, purpose=Purpose.ORDER) -> PaymentIntent:
    return open_payment(units, LIMITED, PaymentRequest(method, purpose, "acc1", reference, 18_900), now)


def refused(units, *args, **kwargs) -> str:
    with pytest.raises(ServiceError) as caught:
        open_limited(units, *args, **kwargs)
    assert caught.value.code == "invalid_state"
    return caught.value.detail


def test_asking_again_for_the_same_method_on_the_same_order_gives_the_open_intent_back():
    units = intake_units(board())
    first = open_one(units)
    again = open_one(units)
    assert again.id == first.id and again.address == first.address
    assert units.state.next_index == {"bitcoin": 1} and len(units.of(PaymentInstructionsCreated)) == 1
    assert open_one(units, method=LTC).id != first.id  # another method: other instructions


def test_once_the_deadline_passed_asking_again_opens_new_instructions():
    units = intake_units(board())
    first = open_limited(units)
    assert open_limited(units, now=first.expires_at - timedelta(microseconds=1)).id == first.id
    assert open_limited(units, now=first.expires_at).id != first.id


def test_an_order_holds_at_most_its_limit_of_open_intents():
    units = intake_units(board())
    open_limited(units, BTC)
    open_limited(units, LTC)  # the limit, 2, reached
    assert refused(units, ETH) == "this order has 2 open payments already: pay one of them or let one expire"
    assert units.state.next_index == {"bitcoin": 1, "litecoin": 1}
    open_limited(units, ETH, reference="o2")  # another order of the account


def test_an_account_holds_at_most_its_limit_of_open_intents_whatever_they_pay():
    units = intake_units(board())
    open_limited(units, BTC, "o1")
    open_limited(units, BTC, "o2")
    open_limited(units, BTC, "t1", purpose=Purpose.TOPUP)  # the limit, 3, reached
    assert refused(units, BTC, "t2", purpose=Purpose.TOPUP) == (
        "this account has 3 open payments already: pay one of them or let one expire"
    )
    assert refused(units, BTC, "o3").startswith("this account has 3")
    request = PaymentRequest(BTC, Purpose.ORDER, "acc2", "o9", 18_900)
    assert open_payment(units, LIMITED, request, T0).derivation_index == 3


def test_an_intent_past_its_deadline_stops_counting_unless_a_transfer_is_on_its_way():
    units = intake_units(board())
    first, _ = open_limited(units, BTC), open_limited(units, LTC)
    after = first.expires_at
    assert open_limited(units, ETH, now=after).asset == "ETH"  # both expired unseen: room again
    units = intake_units(board())
    first, _ = open_limited(units, BTC), open_limited(units, LTC)
    confirming = replace(first, status="confirming")  # a transfer to the first is confirming past the deadline
    units.state.intents[first.id] = confirming
    assert open_limited(units, ETH, now=after).asset == "ETH"  # the second, expired unseen, left room
    assert refused(units, find_method("SOL", "solana"), now=after).startswith("this order has 2")
