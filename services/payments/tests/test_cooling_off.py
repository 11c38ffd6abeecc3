"""Intents for orders that expire unpaid held GPUs from everyone: past a few in a window, the account opens no
new one (and holds nothing) until the oldest leaves the window; its balance still pays."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_kit.transport.calls import RemoteServiceError
from services.payments.tests.helpers import code_of
from services.payments.tests.test_capacity_hold import settle_topup

ACC = "acc1"


@pytest.fixture
def changed_settings() -> dict:
    return {"expired_holds_limit": 2, "expired_holds_window_hours": 24}


def expired_intent(payments, payments_db, order_id: str, ago: timedelta) -> None:
    payment = payments.create_order_payment(ACC, order_id, "BTC", "bitcoin")
    payments_db.move_deadline(payment["id"], datetime.now(UTC) - ago)


def test_two_intents_let_expire_cool_the_account_off_until_the_oldest_leaves_the_window(
    payments_ready, payments, payments_db, new_order, provisioning_double
):
    first, second, third = new_order(ACC), new_order(ACC), new_order(ACC)
    expired_intent(payments, payments_db, first["id"], timedelta(hours=2))
    expired_intent(payments, payments_db, second["id"], timedelta(minutes=1))  # one expired: not yet
    with pytest.raises(RemoteServiceError) as refused:
        payments.create_order_payment(ACC, third["id"], "BTC", "bitcoin")
    assert refused.value.code == "holds_cooling_off"
    assert 0 < refused.value.retry_after <= 22 * 3600  # when the first leaves the window
    assert third["id"] not in provisioning_double.holds  # nothing held for a refused intent
    assert payments.create_order_payment("acc2", new_order("acc2")["id"], "BTC", "bitcoin")["status"] == (
        "awaiting_transfer"
    )  # the account's own
    [row] = payments_db.rows("SELECT id FROM payment_intents WHERE reference_id = :o", o=first["id"])
    payments_db.move_deadline(row["id"], datetime.now(UTC) - timedelta(hours=24, minutes=1))
    assert payments.create_order_payment(ACC, third["id"], "BTC", "bitcoin")["status"] == "awaiting_transfer"


def test_a_cooled_off_account_still_pays_with_its_balance(
    payments_ready, payments, payments_db, watcher, new_order, provisioning_double
):
    settle_topup(payments, watcher, 50_000)
    for _ in range(2):
        expired_intent(payments, payments_db, new_order(ACC)["id"], timedelta(minutes=1))
    order = new_order(ACC)
    assert code_of(payments.create_order_payment, ACC, order["id"], "BTC", "bitcoin") == "holds_cooling_off"
    payments.pay_with_balance(ACC, order["id"])
    assert provisioning_double.paid_now == [order["id"]]  # provisioning's limits on unpaid holds do not apply
