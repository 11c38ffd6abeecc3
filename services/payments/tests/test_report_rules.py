""" "J'ai payé" in memory: the watcher is asked to look once per payment, and only by the payment's account.
test_intents.py runs the same use case over the broker and PostgreSQL."""

from datetime import timedelta

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import PaymentReported
from kernodeck_payments.use_cases.reporting import report_payment
from services.payments.tests.memory import settlement_units
from services.payments.tests.test_settlement import ADDRESS, T0, intent

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("purpose", "order_id"), [("order", "o1"), ("topup", None)])
def test_the_first_report_asks_the_watcher_to_look_and_the_next_ones_change_nothing(purpose, order_id):
    units = settlement_units(intent(purpose))
    reported, transfers = report_payment(units, "acc1", "pi1", T0)
    assert (reported.reported_at, transfers) == (T0, [])
    again, _ = report_payment(units, "acc1", "pi1", T0 + timedelta(minutes=1))
    assert again.reported_at == T0
    [event] = units.of(PaymentReported)
    assert (event.payment_id, event.order_id, event.account_id, event.network, event.address) == (
        "pi1",
        order_id,
        "acc1",
        "bitcoin",
        ADDRESS,
    )


@pytest.mark.parametrize(("account_id", "payment_id"), [("acc2", "pi1"), ("acc1", "pi2")])
def test_another_accounts_payment_or_none_is_not_found_and_nothing_is_asked(account_id, payment_id):
    units = settlement_units(intent())
    with pytest.raises(ServiceError) as caught:
        report_payment(units, account_id, payment_id, T0)
    assert caught.value.code == "not_found"
    assert units.of(PaymentReported) == []
    assert units.state.intents["pi1"].reported_at is None
