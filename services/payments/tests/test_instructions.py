"""An order's payment, in memory: the order payable, its GPUs held first and given back when intake refuses, the
open intent given back when asked again; an extension's copy waited for a moment. test_capacity_hold.py and
test_cooling_off.py run the same use cases over the broker and PostgreSQL."""

from contextlib import contextmanager
from datetime import timedelta

import pytest

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_payments.domain.extensions import PayableExtension
from kernodeck_payments.domain.orders import PayableOrder
from kernodeck_payments.use_cases import balance, instructions
from services.payments.tests.memory import balance_units, intake_units
from services.payments.tests.test_open_payment import BTC, SETTINGS, T0, board

pytestmark = pytest.mark.unit

ORDER = PayableOrder("o1", "acc1", "awaiting_payment", 18_900, model_id="h100", total_gpus=2, ssh_key_given=True)


class Provisioning:
    def __init__(self, new: bool = True):
        self.new = new
        self.holds: list[tuple[str, object, bool]] = []
        self.released: list[str] = []

    def hold(self, order, until, paid_now) -> bool:
        self.holds.append((order.order_id, until, paid_now))
        return self.new

    def release(self, order_id) -> None:
        self.released.append(order_id)


class Orders:
    def __init__(self, *orders: PayableOrder):
        self.orders = {order.order_id: order for order in orders}
        self.asked: list[str] = []

    def payable_order(self, account_id, order_id) -> PayableOrder:
        self.asked.append(order_id)
        if order_id not in self.orders:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
        return self.orders[order_id]


def pay(units, provisioning, orders=None, order_id="o1"):
    return instructions.open_order_payment(units, SETTINGS, orders or Orders(), provisioning, BTC, "acc1", order_id, T0)


def test_the_gpus_are_held_until_the_intents_deadline_then_asked_again_the_same_intent_comes_back_unheld():
    units, provisioning = intake_units(board(), (), ORDER), Provisioning()
    intent, new = pay(units, provisioning)
    assert new and intent.expires_at == T0 + SETTINGS.intent_ttl
    assert provisioning.holds == [("o1", intent.expires_at, False)]
    again, new = pay(units, provisioning)
    assert (again.id, new) == (intent.id, False)
    assert len(provisioning.holds) == 1 and provisioning.released == []


@pytest.mark.parametrize(("new", "released"), [(True, ["o1"]), (False, [])])
def test_a_hold_this_call_took_is_given_back_when_intake_refuses(new, released):
    units, provisioning = intake_units(board(switched_off=[("BTC", "bitcoin")]), (), ORDER), Provisioning(new)
    with pytest.raises(ServiceError) as caught:
        pay(units, provisioning)
    assert caught.value.code == "method_unavailable"
    assert provisioning.released == released
    assert units.state.intents == {}


def test_an_order_without_a_copy_yet_is_asked_of_orders_and_one_with_a_copy_is_not():
    orders = Orders(ORDER)
    pay(intake_units(board()), Provisioning(), orders)
    assert orders.asked == ["o1"]
    pay(intake_units(board(), (), ORDER), Provisioning(), orders)
    assert orders.asked == ["o1"]


@pytest.mark.parametrize("status", ["paid", "cancelled"])
def test_an_order_not_awaiting_payment_is_refused_before_any_hold(status):
    provisioning = Provisioning()
    copy = PayableOrder("o1", "acc1", status, 18_900, model_id="h100", total_gpus=2, ssh_key_given=True)
    with pytest.raises(ServiceError) as caught:
        pay(intake_units(board(), (), copy), provisioning)
    assert caught.value.code == "invalid_state"
    assert provisioning.holds == []


class Clock:
    def __init__(self):
        self.now, self.slept = 0.0, 0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += 1


EXTENSION = PayableExtension("x1", "o1", "acc1", 5_000, T0 + timedelta(days=1))


def test_an_extension_confirmed_a_moment_ago_is_waited_for_and_one_never_confirmed_is_not_found():
    units, clock = intake_units(board(), (), EXTENSION), Clock()
    assert instructions.payable_extension(units, "acc1", "x1", lambda: T0, clock, clock.sleep) == EXTENSION
    assert clock.slept == 0
    with pytest.raises(ServiceError) as caught:
        instructions.payable_extension(units, "acc1", "x2", lambda: T0, clock, clock.sleep)
    assert caught.value.code == "not_found"
    assert clock.now == pytest.approx(instructions.EXTENSION_ARRIVAL_S, abs=instructions.EXTENSION_POLL_S)


def test_an_extensions_intent_pays_its_price_and_names_its_order():
    units, clock = intake_units(board(), (), EXTENSION), Clock()
    intent = instructions.open_extension_payment(units, SETTINGS, BTC, "acc1", "x1", lambda: T0, clock, clock.sleep)
    assert (intent.purpose, intent.reference_id, intent.order_id, intent.amount_usd_cents) == (
        "extension",
        "x1",
        "o1",
        5_000,
    )
    again = instructions.open_extension_payment(units, SETTINGS, BTC, "acc1", "x1", lambda: T0, clock, clock.sleep)
    assert again.id == intent.id  # asked again: the open one


# --- no call to another service inside a transaction -------------------------------------------------------------


class Transactions:
    """Units that count their open transactions, for doubles that check none is open when they are called."""

    def __init__(self, units):
        self.units, self.open = units, 0

    @contextmanager
    def transaction(self):
        with self.units.transaction() as unit:
            self.open += 1
            try:
                yield unit
            finally:
                self.open -= 1

    def __getattr__(self, name):
        return getattr(self.units, name)


class Between:
    """A double of another service that fails when called inside a transaction of any of `units`."""

    def __init__(self, double, *units: Transactions):
        self.double, self.units = double, units

    def __getattr__(self, name):
        def call(*args, **kwargs):
            assert all(units.open == 0 for units in self.units), f"{name} called inside a transaction"
            return getattr(self.double, name)(*args, **kwargs)

        return call


@pytest.mark.parametrize("switched_off", [[], [("BTC", "bitcoin")]], ids=["opened", "refused"])
def test_orders_and_provisioning_are_asked_between_transactions_when_opening(switched_off):
    units, provisioning = Transactions(intake_units(board(switched_off=switched_off))), Provisioning()
    peers = Between(Orders(ORDER), units), Between(provisioning, units)
    try:
        instructions.open_order_payment(units, SETTINGS, *peers, BTC, "acc1", "o1", T0)
    except ServiceError:
        assert provisioning.released == ["o1"]
    assert len(provisioning.holds) == 1


@pytest.mark.parametrize("available", [18_900, 0], ids=["paid", "short"])
def test_orders_and_provisioning_are_asked_between_transactions_when_paying_from_the_balance(available):
    intake, units = Transactions(intake_units(board())), Transactions(balance_units(acc1=available))
    provisioning = Provisioning()
    peers = Between(Orders(ORDER), intake, units), Between(provisioning, intake, units)
    try:
        balance.pay_order_from_balance(units, intake, *peers, "acc1", "o1", lambda: T0)
    except ServiceError:
        assert provisioning.released == ["o1"]
    assert len(provisioning.holds) == 1
