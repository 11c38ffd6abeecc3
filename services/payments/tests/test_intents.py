"""Payment intents through the running service: addresses, amounts, URIs, deadlines, refusals, concurrency.

The account keys are those of the public "abandon ... about" test mnemonic
(conftest.TEST_KEYS); the addresses below are the ones its wallets publish.
"""

from datetime import timedelta

import eventlet
import pytest
from sqlalchemy import text
from sqlmodel import Session

from kernodeck_chains.derivation import derive_deposit_address
from kernodeck_chains.networks import chain_params
from kernodeck_contracts.events import WatcherStatus
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.units import SqlUnits
from kernodeck_payments.domain.intents import PaymentRequest, Purpose
from kernodeck_payments.domain.methods import find_method
from kernodeck_payments.store.addresses import import_solana_addresses
from kernodeck_payments.store.units import SqlIntake
from kernodeck_payments.use_cases.intake import open_payment
from services.payments.tests.conftest import RATES, TEST_KEYS
from services.payments.tests.helpers import (
    USDC_ETHEREUM,
    USDT_ETHEREUM,
    USDT_TRON,
    code_of,
    now,
    parse_time,
    refusal,
    report_watchers,
    run_entrypoint,
    wait_until,
)

ACC = "acc1"
# Valid Solana addresses (ed25519 points), as an operator would import them; the pool hands out the
# oldest import first, then in address order.
SOLANA_POOL = [
    "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    "HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH",
    "83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",
]


@pytest.fixture
def order(payments_ready, new_order):
    """A 189.00 USD order of ACC (h100, 3 days, 1 lot)."""
    created = new_order(ACC)
    assert created["summary"]["total_usd_cents"] == 18_900
    return created


def fill_solana_pool(payments_db, addresses) -> None:
    with payments_db.session() as session:
        assert import_solana_addresses(session, addresses, now()) == len(addresses)
        session.commit()


def methods(payments) -> dict[tuple[str, str], str | None]:
    """(asset, network) -> the reason it is unavailable, None when available."""
    listed = payments.list_methods()
    assert all(m["available"] == (m["reason"] is None) for m in listed)
    return {(m["asset"], m["network"]): m["reason"] for m in listed}


def use_rates(running, write_rates, **changes) -> None:
    write_rates({**RATES, **changes})
    run_entrypoint(running["payments"], "refresh_rates")


# --- what an intent says ---------------------------------------------------

# asset, network, address, base units, amount text, rate, URI, confirmations required.
# 189.00 USD at BTC 64123.45, ETH 3456.789, TRX 0.2437, SOL 151.37, LTC 87.65; USDT and USDC at their peg.
EXPECTED = [
    (
        "BTC",
        "bitcoin",
        "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
        294_744,
        "0.00294744",
        "64123.45",
        "bitcoin:bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu?amount=0.00294744",
        2,
    ),
    (
        "ETH",
        "ethereum",
        "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
        54_676_000_000_000_000,
        "0.054676",
        "3456.789",
        "ethereum:0x9858EfFD232B4033E47d90003D41EC34EcaEda94@1?value=54676000000000000",
        12,
    ),
    (
        "USDT",
        "ethereum",
        "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0",
        189_000_000,
        "189",
        "1",
        f"ethereum:{USDT_ETHEREUM}@1/transfer?address=0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0&uint256=189000000",
        12,
    ),
    (
        "USDC",
        "ethereum",
        "0xb6716976A3ebe8D39aCEB04372f22Ff8e6802D7A",
        189_000_000,
        "189",
        "1",
        f"ethereum:{USDC_ETHEREUM}@1/transfer?address=0xb6716976A3ebe8D39aCEB04372f22Ff8e6802D7A&uint256=189000000",
        12,
    ),
    (
        "TRX",
        "tron",
        "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH",
        775_543_702,
        "775.543702",
        "0.2437",
        "tron:TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH?amount=775.543702",
        19,
    ),
    (
        "USDT",
        "tron",
        "TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK",
        189_000_000,
        "189",
        "1",
        f"tron:TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK?amount=189&token={USDT_TRON}",
        19,
    ),
    (
        "SOL",
        "solana",
        "83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",
        1_248_597_000,
        "1.248597",
        "151.37",
        "solana:83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri?amount=1.248597",
        32,
    ),
    (
        "LTC",
        "litecoin",
        "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh",
        215_630_348,
        "2.15630348",
        "87.65",
        "litecoin:ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh?amount=2.15630348",
        6,
    ),
]


@pytest.mark.parametrize("changed_settings", [{"open_intents_per_order": len(EXPECTED)}])
def test_each_of_the_eight_methods_quotes_its_own_address_amount_uri_and_deadline(
    payments_events, order, payments, running, write_rates, payments_db
):
    fill_solana_pool(payments_db, SOLANA_POOL)
    use_rates(
        running,
        write_rates,
        BTC="64123.45",
        ETH="3456.789",
        USDT="0.999",
        USDC="1.001",
        TRX="0.2437",
        SOL="151.37",
        LTC="87.65",
    )

    created = [payments.create_order_payment(ACC, order["id"], asset, network) for asset, network, *_ in EXPECTED]

    for payment, (asset, network, address, base_units, amount, rate, uri, confirmations) in zip(
        created, EXPECTED, strict=True
    ):
        assert (payment["asset"], payment["network"], payment["order_id"], payment["purpose"]) == (
            asset,
            network,
            order["id"],
            "order",
        )
        assert payment["address"] == address
        assert (payment["amount_base_units"], payment["amount"], payment["amount_usd_cents"]) == (
            base_units,
            amount,
            18_900,
        )
        assert (payment["rate"], payment["uri"]) == (rate, uri)
        assert (payment["status"], payment["required_confirmations"]) == ("awaiting_transfer", confirmations)
        assert parse_time(payment["expires_at"]) - parse_time(payment["created_at"]) == timedelta(minutes=30)

    watched = {event["payment_id"]: event for event in payments_events.wait_for("address_watched", len(EXPECTED))}
    assert len(watched) == len(EXPECTED)
    for payment in created:
        event = watched[payment["id"]]
        assert (event["network"], event["address"], event["required_confirmations"]) == (
            payment["network"],
            payment["address"],
            payment["required_confirmations"],
        )
        assert parse_time(event["watch_until"]) == parse_time(payment["expires_at"]) + timedelta(days=7)
    # Each payment keeps its own instructions in the customer's history.
    history = payments.list_order_payments(ACC, order["id"])
    assert sorted(p["id"] for p in history) == sorted(p["id"] for p in created)
    assert len({p["address"] for p in history}) == len(EXPECTED)


def test_consecutive_intents_take_consecutive_indexes_of_the_account_key(order, payments, new_order, payments_db):
    first = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    second = payments.create_topup("acc2", 10_000, "BTC", "bitcoin")["payment"]

    assert first["address"] == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
    assert second["address"] == "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"
    indexes = payments_db.rows("SELECT id, derivation_index FROM payment_intents")
    assert {row["id"]: row["derivation_index"] for row in indexes} == {first["id"]: 0, second["id"]: 1}


def test_solana_takes_addresses_from_the_operator_pool_and_reports_an_empty_one(
    order, payments, payments_db, new_order
):
    assert methods(payments)[("SOL", "solana")] == "address_pool_empty"
    refused = refusal(payments.create_order_payment, ACC, order["id"], "SOL", "solana")
    assert refused.code == "method_unavailable" and "address_pool_empty" in refused.detail

    fill_solana_pool(payments_db, SOLANA_POOL[:1])
    assert methods(payments)[("SOL", "solana")] is None
    payment = payments.create_order_payment(ACC, order["id"], "SOL", "solana")
    assert payment["address"] == SOLANA_POOL[0]

    # The only address is taken: never handed out twice.
    assert methods(payments)[("SOL", "solana")] == "address_pool_empty"
    assert code_of(payments.create_order_payment, ACC, new_order(ACC)["id"], "SOL", "solana") == "method_unavailable"


def test_a_solana_address_is_never_handed_to_anyone_else_even_once_its_watch_ended_with_nothing(
    order, payments, payments_db, running, new_order
):
    """PRODUCT.md: an address is never reused. A late transfer, or a customer paying a saved address, pays the
    customer it was given to; the pool shrinks, and the operator's alert says when to import more."""
    fill_solana_pool(payments_db, SOLANA_POOL[:1])
    quiet = payments.create_order_payment(ACC, order["id"], "SOL", "solana")
    payments_db.execute("UPDATE payment_intents SET watch_until = :at WHERE id = :id", at=now(), id=quiet["id"])
    run_entrypoint(running["payments"], "sweep")
    assert methods(payments)[("SOL", "solana")] == "address_pool_empty"
    assert code_of(payments.create_order_payment, "acc2", new_order("acc2")["id"], "SOL", "solana") == (
        "method_unavailable"
    )
    assert payments.get_payment(ACC, quiet["id"])["address"] == SOLANA_POOL[0]


def test_instructions_for_an_order_end_with_the_order_when_it_lapses_sooner(
    payments_ready, payments, new_order, provisioning_double, settings
):
    lapsing = new_order(ACC, lapses_in=timedelta(minutes=20))
    payment = payments.create_order_payment(ACC, lapsing["id"], "BTC", "bitcoin")
    assert parse_time(payment["expires_at"]) == lapsing["expires_at"]  # what the customer sees: the order's end
    assert provisioning_double.asked == [(lapsing["id"], lapsing["expires_at"].isoformat())]

    late = new_order(ACC, lapses_in=settings.intent_shortest - timedelta(seconds=5))
    refused = refusal(payments.create_order_payment, ACC, late["id"], "BTC", "bitcoin")
    assert refused.code == "invalid_state" and refused.detail.endswith("too little time is left to pay it by crypto")
    roomy = new_order(ACC, lapses_in=settings.intent_shortest + timedelta(seconds=30))
    assert payments.create_order_payment(ACC, roomy["id"], "BTC", "bitcoin")["status"] == "awaiting_transfer"


# --- limits ------------------------------------------------------------------


def test_asking_again_for_the_same_method_gives_the_same_instructions_and_holds_nothing_more(
    order, payments, provisioning_double
):
    first = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    again = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    assert (again["id"], again["address"], again["expires_at"]) == (first["id"], first["address"], first["expires_at"])
    assert [order_id for order_id, _ in provisioning_double.asked] == [order["id"]]  # the hold is not prolonged


def test_an_order_and_an_account_hold_at_most_their_limits_of_open_payments(order, payments, new_order, settings):
    assert (settings.open_intents_per_order, settings.open_intents_per_account) == (3, 10)
    for asset, network in [("BTC", "bitcoin"), ("LTC", "litecoin"), ("ETH", "ethereum")]:
        payments.create_order_payment(ACC, order["id"], asset, network)
    refused = refusal(payments.create_order_payment, ACC, order["id"], "TRX", "tron")
    assert (refused.code, refused.detail) == (
        "invalid_state",
        "this order has 3 open payments already: pay one of them or let one expire",
    )
    for _ in range(6):
        payments.create_topup(ACC, 10_000, "BTC", "bitcoin")
    payments.create_order_payment(ACC, new_order(ACC)["id"], "BTC", "bitcoin")  # the tenth
    assert code_of(payments.create_topup, ACC, 10_000, "BTC", "bitcoin") == "invalid_state"
    assert code_of(payments.create_order_payment, ACC, new_order(ACC)["id"], "BTC", "bitcoin") == "invalid_state"
    assert payments.create_topup("acc2", 10_000, "BTC", "bitcoin")["payment"]["status"] == "awaiting_transfer"


# --- refusals --------------------------------------------------------------


REFUSED_PAIRS = [("USDC", "tron", "network"), ("USDT", "solana", "network"), ("BTC", "ethereum", "network")]


def test_a_pair_outside_the_eight_methods_is_refused(order, payments, payments_events):
    for asset, network, field in [*REFUSED_PAIRS, ("DOGE", "dogecoin", "asset")]:
        refused = refusal(payments.create_order_payment, ACC, order["id"], asset, network)
        assert (refused.code, [error["field"] for error in refused.errors]) == ("validation_error", [field]), asset
        assert code_of(payments.create_topup, ACC, 10_000, asset, network) == "validation_error"

    assert payments.list_order_payments(ACC, order["id"]) == []
    assert payments.list_topups(ACC)["items"] == []
    assert payments_events.of("address_watched") == []


def test_another_accounts_order_is_not_found(order, payments):
    assert code_of(payments.create_order_payment, "acc2", order["id"], "BTC", "bitcoin") == "not_found"
    assert code_of(payments.create_order_payment, ACC, "no-such-order", "BTC", "bitcoin") == "not_found"


def test_an_order_no_longer_awaiting_payment_takes_no_intent(order, payments, orders):
    payment = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    orders.moved(order, "paid")

    refused = refusal(payments.create_order_payment, ACC, order["id"], "LTC", "litecoin")
    assert (refused.code, refused.detail) == ("invalid_state", "the order is paid, not awaiting payment")
    assert [p["id"] for p in payments.list_order_payments(ACC, order["id"])] == [payment["id"]]


def test_a_method_switched_off_by_an_operator_is_unavailable(order, payments):
    switched = payments.set_method_enabled("op-1", "TRX", "tron", False)

    assert switched == {"asset": "TRX", "network": "tron", "available": False, "reason": "disabled"}
    assert methods(payments)[("TRX", "tron")] == "disabled"
    assert methods(payments)[("USDT", "tron")] is None  # the other method on the network is untouched
    refused = refusal(payments.create_order_payment, ACC, order["id"], "TRX", "tron")
    assert refused.code == "method_unavailable" and "disabled" in refused.detail
    assert payments.list_order_payments(ACC, order["id"]) == []

    assert payments.set_method_enabled("op-1", "TRX", "tron", True)["available"] is True
    assert (
        payments.create_order_payment(ACC, order["id"], "TRX", "tron")["address"]
        == "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"
    )


def test_stale_rates_refuse_instructions_and_make_nothing(
    order, payments, running, write_rates, payments_db, payments_events
):
    stale = now() - timedelta(hours=1)
    write_rates(RATES, as_of=stale)
    payments_db.age_rates(stale)
    run_entrypoint(running["payments"], "refresh_rates")

    assert set(methods(payments).values()) == {"rate_unavailable"}
    assert code_of(payments.create_order_payment, ACC, order["id"], "BTC", "bitcoin") == "rate_unavailable"
    assert code_of(payments.create_topup, ACC, 10_000, "ETH", "ethereum") == "rate_unavailable"
    # Nothing half made: no intent, no address watched, no index used.
    assert payments.list_order_payments(ACC, order["id"]) == []
    assert payments.list_topups(ACC)["items"] == []
    assert payments.get_balance(ACC) == {"available_usd_cents": 0, "pending_usd_cents": 0}
    assert payments_events.of("address_watched") == []

    use_rates(running, write_rates)
    payment = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    assert payment["address"] == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"  # index 0: none was spent


def test_a_stablecoin_off_its_peg_has_no_rate(order, payments, running, write_rates):
    use_rates(running, write_rates, USDT="0.90")

    reasons = methods(payments)
    assert reasons[("USDT", "ethereum")] == reasons[("USDT", "tron")] == "rate_unavailable"
    assert reasons[("USDC", "ethereum")] is None
    assert code_of(payments.create_order_payment, ACC, order["id"], "USDT", "tron") == "rate_unavailable"
    assert code_of(payments.create_order_payment, ACC, order["id"], "USDT", "ethereum") == "rate_unavailable"

    use_rates(running, write_rates, USDT="0.985")  # within the 2 % guard: quoted at exactly 1
    payment = payments.create_order_payment(ACC, order["id"], "USDT", "tron")
    assert (payment["rate"], payment["amount_base_units"]) == ("1", 189_000_000)


def test_a_lagging_watcher_makes_its_network_unavailable(order, payments, watcher):
    watcher.send(WatcherStatus, network="bitcoin", node_height=1_000, scanned_height=990, lag_seconds=900, lagging=True)

    assert methods(payments)[("BTC", "bitcoin")] == "chain_lagging"
    assert methods(payments)[("LTC", "litecoin")] is None
    refused = refusal(payments.create_order_payment, ACC, order["id"], "BTC", "bitcoin")
    assert refused.code == "method_unavailable" and "chain_lagging" in refused.detail

    watcher.send(
        WatcherStatus, network="bitcoin", node_height=1_001, scanned_height=1_001, lag_seconds=0, lagging=False
    )
    assert methods(payments)[("BTC", "bitcoin")] is None


def test_a_network_whose_watcher_never_reported_or_went_quiet_is_chain_lagging(
    payments, watcher, payments_db, settings, new_order
):
    # Rates are there, no watcher has said a word: no method can be offered, no instructions given.
    assert set(wait_until(lambda: methods(payments), what="the methods").values()) == {"chain_lagging"}
    assert code_of(payments.create_order_payment, ACC, new_order(ACC)["id"], "BTC", "bitcoin") == "method_unavailable"

    report_watchers(watcher, "bitcoin")
    wait_until(lambda: methods(payments)[("BTC", "bitcoin")] is None, what="bitcoin to be offered")
    assert methods(payments)[("LTC", "litecoin")] == "chain_lagging"

    # A watcher that stopped reporting is as good as lagging: both sides of PAYMENTS_WATCHER_STALE_S.
    stale = settings.watcher_stale_s
    for age, reason in ((stale - 5, None), (stale + 1, "chain_lagging")):
        payments_db.execute("UPDATE watcher_reports SET reported_at = :at", at=now() - timedelta(seconds=age))
        assert methods(payments)[("BTC", "bitcoin")] == reason


# --- "J'ai payé" -----------------------------------------------------------


def test_i_have_paid_pressed_fifty_times_asks_the_watcher_once_and_credits_nothing(
    order, payments, payments_events, payments_db
):
    payment = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")

    first = payments.report_payment(ACC, payment["id"])
    for _ in range(48):
        payments.report_payment(ACC, payment["id"])
    second = payments.report_payment(ACC, payment["id"])

    assert first["reported_at"] is not None
    assert second["reported_at"] == first["reported_at"]
    assert first["status"] == second["status"] == "awaiting_transfer"
    assert second["received_base_units"] == 0
    assert payments.get_balance(ACC) == {"available_usd_cents": 0, "pending_usd_cents": 0}
    assert payments.list_ledger(ACC)["items"] == []
    assert payments_db.ledger() == []
    reported = payments_events.wait_for("payment_reported", 1)
    assert [(e["payment_id"], e["order_id"], e["account_id"], e["network"], e["address"]) for e in reported] == [
        (payment["id"], order["id"], ACC, "bitcoin", payment["address"])
    ]
    payments_events.wait_for("payment_instructions_created", 1)
    assert len(payments_events.of("payment_reported")) == 1  # every press was answered before this read


def test_another_accounts_payment_is_not_found(order, payments):
    payment = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")

    assert code_of(payments.get_payment, "acc2", payment["id"]) == "not_found"
    assert code_of(payments.report_payment, "acc2", payment["id"]) == "not_found"
    assert code_of(payments.report_payment, ACC, "no-such-payment") == "not_found"
    assert payments.get_payment(ACC, payment["id"])["reported_at"] is None


# --- concurrency -------------------------------------------------------------


def test_a_thousand_concurrent_intents_get_a_thousand_distinct_addresses(payments_ready, settings, databases):
    """intake.open_payment as the service calls it, 25 greenthreads at once, each in its own PostgreSQL transaction."""
    engine = make_engine(databases["payments"], pool_size=13)  # at most 26 connections
    store = Store(engine, "payments", relay=None)  # the running container's outbox relay publishes the events
    units = SqlUnits(store, lambda tx: SqlIntake(tx, settings))
    method = find_method("BTC", "bitcoin")

    def open_one(n: int) -> tuple[str, int]:
        intent = open_payment(
            units, settings, PaymentRequest(method, Purpose.TOPUP, f"acc{n}", f"topup{n}", 10_000), now()
        )
        return intent.address, intent.derivation_index

    try:
        opened = list(eventlet.GreenPool(25).imap(open_one, range(1_000)))
        with Session(engine) as session:
            rows = session.execute(text("SELECT address, derivation_index FROM payment_intents")).all()
            watched = session.execute(text("SELECT count(*) FROM outbox WHERE event_type = 'address_watched'")).scalar()
    finally:
        engine.dispose()

    assert len({address for address, _ in opened}) == 1_000
    assert sorted(index for _, index in opened) == list(range(1_000))
    assert sorted(rows) == sorted(opened)
    assert watched == 1_000
    by_index = {index: address for address, index in opened}
    assert (by_index[0], by_index[1], by_index[999]) == (
        "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
        "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g",
        derive_deposit_address("bitcoin", TEST_KEYS["bitcoin"], 999, chain_params("bitcoin", "mainnet")).address,
    )
