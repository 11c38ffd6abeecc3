"""Opening payment instructions, in memory: the locked rate and amount, fresh addresses, refusals that leave nothing."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import AddressWatched, PaymentInstructionsCreated
from kernodeck_payments.availability import MethodBoard
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.intents import Purpose
from kernodeck_payments.domain.methods import METHODS, find_method
from kernodeck_payments.intake import open_payment
from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.store.tables import PaymentIntent, Topup
from services.payments.tests.conftest import RATES, TEST_KEYS
from services.payments.tests.memory import intake_units

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


def open_one(units, method=BTC, reference="o1", cents=18_900, purpose=Purpose.ORDER, *also) -> PaymentIntent:
    return open_payment(units, SETTINGS, method, purpose, "acc1", reference, cents, T0, *also)


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
    topup = Topup(id="t1", account_id="acc1", amount_usd_cents=10_000, created_at=T0)
    intent = open_one(units, BTC, "t1", 10_000, Purpose.TOPUP, topup)
    assert [type(row).__name__ for row in units.state.rows] == ["Topup", "PaymentIntent"]
    assert (intent.purpose, intent.reference_id) == (Purpose.TOPUP, "t1")


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
    assert (units.state.rows, units.state.next_index, units.emitted) == ([], {}, [])


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
