"""The orders' use cases in memory: creation, cancellation, the unpaid sweep, payments settled and reported."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts import timeline
from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import (
    OrderCreated,
    OrderStatusChanged,
    PaymentInstructionsCreated,
    PaymentRefused,
    PaymentReported,
    PaymentSettled,
    PaymentStatusChanged,
    SupportRequestAnswered,
)
from kernodeck_contracts.rpc import Quote
from kernodeck_kit.paging import Page
from kernodeck_orders import use_cases
from kernodeck_orders.domain import OrderLimits, OrderStatus
from services.orders.tests.conftest import SUMMARY
from services.orders.tests.memory import memory_units

pytestmark = pytest.mark.unit

ALICE, BOB = "acct-alice", "acct-bob"
T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
TTL = timedelta(hours=24)
ROOMY = OrderLimits(unpaid=100, created_per_window=100, window=timedelta(hours=1))  # for the tests of other rules
LIMITS = OrderLimits(unpaid=3, created_per_window=5, window=timedelta(hours=1))
QUOTE = Quote(**SUMMARY.model_dump(), available=True)
FIRST_PAGE = Page.ask()


@pytest.fixture
def units():
    return memory_units()


@pytest.fixture
def order(units):
    """`order(account=ALICE, at=T0, id=...)`: a new order awaiting payment."""
    ids = iter(f"o{n}" for n in range(1, 100))

    def create(account_id: str = ALICE, at: datetime = T0):
        return use_cases.create_order(units, next(ids), account_id, QUOTE, at, TTL, ROOMY)

    return create


def refusal(call, *args) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        call(*args)
    return caught.value


def create_within(units, order_id: str, at: datetime = T0, account_id: str = ALICE):
    return use_cases.create_order(units, order_id, account_id, QUOTE, at, TTL, LIMITS)


def test_an_account_opens_unpaid_orders_up_to_its_limit_and_one_more_once_one_is_settled(units):
    for n in range(3):
        create_within(units, f"o{n}")
    error = refusal(create_within, units, "o3")
    assert (error.code, error.detail) == (
        "unpaid_orders_limit",
        "you have 3 unpaid orders and an account may have 3: pay or cancel one first",
    )
    assert create_within(units, "b1", account_id=BOB).status == OrderStatus.AWAITING_PAYMENT  # a limit per account
    use_cases.cancel_order(units, ALICE, "o0", T0)
    assert create_within(units, "o3").status == OrderStatus.AWAITING_PAYMENT


def test_an_account_creates_orders_at_a_pace_and_waits_for_the_oldest_to_leave_the_window(units):
    for n in range(5):
        create_within(units, f"o{n}", T0 + timedelta(minutes=n))
        use_cases.cancel_order(units, ALICE, f"o{n}", T0 + timedelta(minutes=n))
    error = refusal(create_within, units, "o5", T0 + timedelta(minutes=10))
    assert (error.code, error.retry_after) == ("too_many_requests", 50 * 60)
    last_second = T0 + timedelta(minutes=59, seconds=59)
    assert (refusal(create_within, units, "o5", last_second).retry_after) == 1
    late = T0 + timedelta(minutes=60)  # the first order left the window
    assert create_within(units, "o5", late).status == OrderStatus.AWAITING_PAYMENT


def settled(order, amount: int = 18_900, account_id: str = ALICE, method: str = "BTC/bitcoin") -> PaymentSettled:
    return PaymentSettled(
        payment_id=f"p-{order.id}", order_id=order.id, account_id=account_id, amount_usd_cents=amount, method=method
    )


def status_changes(units) -> list[tuple[str, str, str, str]]:
    return [(e.order_id, e.previous_status, e.status, e.reason) for e in units.of(OrderStatusChanged)]


def test_a_new_order_keeps_the_quote_and_is_announced_with_its_total(units, order):
    created = order()
    assert (created.status, created.summary.total_usd_cents) == (OrderStatus.AWAITING_PAYMENT, 18_900)
    [event] = units.of(OrderCreated)
    assert (event.order_id, event.account_id, event.total_usd_cents, event.occurred_at) == ("o1", ALICE, 18_900, T0)
    assert event.expires_at == T0 + TTL


def test_no_order_when_capacity_is_short(units):
    short = QUOTE.model_copy(update={"available": False, "lots": 2})
    error = refusal(use_cases.create_order, units, "o1", ALICE, short, T0, TTL, ROOMY)
    assert (error.code, error.detail) == ("out_of_capacity", "NVIDIA H100 SXM has fewer than 2 lots free right now")
    assert units.state.orders == {} and units.emitted == []


def test_the_accounts_orders_newest_first_and_anothers_look_missing(units, order):
    first, second = order(at=T0), order(at=T0 + timedelta(minutes=1))
    assert [o.id for o in use_cases.list_orders(units, ALICE, FIRST_PAGE)] == [second.id, first.id]
    assert use_cases.list_orders(units, BOB, FIRST_PAGE) == []
    for account, order_id in ((BOB, first.id), (ALICE, "missing")):
        error = refusal(use_cases.get_order, units, account, order_id)
        assert (error.code, error.detail) == ("not_found", "no such order")
    assert refusal(use_cases.cancel_order, units, BOB, first.id, T0).code == "not_found"


def test_a_customer_cancels_an_unpaid_order_once(units, order):
    created = order()
    cancelled = use_cases.cancel_order(units, ALICE, created.id, T0 + timedelta(minutes=5))
    assert [(e.kind, e.said.code) for e in cancelled.timeline] == [
        ("created", "order_recorded"),
        ("cancelled", "cancelled_by_customer"),
    ]
    assert refusal(use_cases.cancel_order, units, ALICE, created.id, T0).code == "invalid_state"
    assert status_changes(units) == [(created.id, "awaiting_payment", "cancelled", "cancelled_by_customer")]


def test_the_sweep_cancels_only_orders_unpaid_past_the_ttl_oldest_first(units, order):
    old, older, fresh = order(at=T0 - timedelta(hours=1)), order(at=T0 - timedelta(hours=2)), order(at=T0 + TTL)
    paid = order(at=T0 - timedelta(hours=3))
    use_cases.apply_payments_settled(units, [settled(paid)], T0)

    assert use_cases.cancel_unpaid_orders(units, T0 + TTL, TTL, batch=1) == 1
    assert use_cases.get_order(units, ALICE, older.id).status == OrderStatus.CANCELLED
    assert use_cases.cancel_unpaid_orders(units, T0 + TTL, TTL, batch=10) == 1
    assert use_cases.cancel_unpaid_orders(units, T0 + TTL, TTL, batch=10) == 0
    statuses = {o.id: o.status for o in use_cases.list_orders(units, ALICE, FIRST_PAGE)}
    assert statuses == {
        old.id: OrderStatus.CANCELLED,
        older.id: OrderStatus.CANCELLED,
        fresh.id: OrderStatus.AWAITING_PAYMENT,
        paid.id: OrderStatus.PAID,
    }
    assert [change[3] for change in status_changes(units)] == ["paid_crypto", "cancelled_unpaid", "cancelled_unpaid"]


def test_a_settled_payment_makes_the_order_paid_once_and_a_redelivery_changes_nothing(units, order):
    created = order()
    event = settled(created)
    use_cases.apply_payments_settled(units, [event], T0 + timedelta(minutes=3))
    use_cases.apply_payments_settled(units, [event], T0 + timedelta(minutes=4))

    paid = use_cases.get_order(units, ALICE, created.id)
    assert (paid.status, paid.timeline[-1].detail, paid.updated_at) == (
        OrderStatus.PAID,
        "Paid: BTC on Bitcoin, confirmed on the chain",
        T0 + timedelta(minutes=3),
    )
    assert status_changes(units) == [(created.id, "awaiting_payment", "paid", "paid_crypto")]
    assert units.of(PaymentRefused) == []


@pytest.mark.parametrize(
    ("prepare", "account", "reason"),
    [
        (lambda units, o: None, BOB, "unknown_order"),
        (
            lambda units, o: use_cases.apply_payments_settled(units, [settled(o, method="balance")], T0),
            ALICE,
            "order_paid",
        ),
        (lambda units, o: use_cases.cancel_order(units, ALICE, o.id, T0), ALICE, "order_cancelled"),
    ],
    ids=["another account", "paid already", "cancelled"],
)
def test_a_payment_the_order_cannot_take_goes_back_as_refused(units, order, prepare, account, reason):
    created = order()
    prepare(units, created)
    event = PaymentSettled(
        payment_id="p2", order_id=created.id, account_id=account, amount_usd_cents=18_900, method="x"
    )
    use_cases.apply_payments_settled(units, [event], T0)

    [refused] = units.of(PaymentRefused)
    assert (refused.payment_id, refused.account_id, refused.amount_usd_cents, refused.reason) == (
        "p2",
        account,
        18_900,
        reason,
    )


def test_a_blocks_settled_payments_pay_each_order_once_in_one_unit_and_a_second_one_goes_back(units, order):
    first, second = order(), order()
    paid_first = settled(first)
    again = settled(first).model_copy(update={"payment_id": "p-again"})  # a second payment for the first order
    batch = [paid_first, again, settled(second), paid_first]  # the last a redelivery within the batch
    use_cases.apply_payments_settled(units, batch, T0)
    use_cases.apply_payments_settled(units, batch, T0)  # the whole batch redelivered
    assert status_changes(units) == [
        (first.id, "awaiting_payment", "paid", "paid_crypto"),
        (second.id, "awaiting_payment", "paid", "paid_crypto"),
    ]
    assert [(e.payment_id, e.reason) for e in units.of(PaymentRefused)] == [("p-again", "order_paid")]


@pytest.mark.parametrize(("amount", "status", "refusals"), [(18_899, "awaiting_payment", 1), (18_900, "paid", 0)])
def test_an_order_is_paid_only_by_a_payment_of_its_whole_total(units, order, amount, status, refusals):
    created = order()
    use_cases.apply_payments_settled(units, [settled(created, amount=amount)], T0)
    assert use_cases.get_order(units, ALICE, created.id).status == status
    assert [(e.amount_usd_cents, e.reason) for e in units.of(PaymentRefused)] == [(amount, "short_of_total")] * refusals


def test_a_payment_for_an_order_never_seen_is_refused(units):
    event = PaymentSettled(payment_id="p1", order_id="nope", account_id=ALICE, amount_usd_cents=500, method="x")
    use_cases.apply_payments_settled(units, [event], T0)
    assert [e.reason for e in units.of(PaymentRefused)] == ["unknown_order"]


def test_each_i_have_paid_is_noted_once_and_the_order_does_not_move(units, order):
    created = order()

    def reported(account_id=ALICE, order_id=created.id):
        return PaymentReported(
            payment_id="p1", order_id=order_id, account_id=account_id, network="bitcoin", address="a"
        )

    first = reported()
    for event in (first, first, reported(), reported(account_id=BOB), reported(order_id=None)):
        use_cases.note_payment_reported(units, event, T0)

    kept = use_cases.get_order(units, ALICE, created.id)
    assert [e.kind for e in kept.timeline] == ["created", "payment_reported", "payment_reported"]
    assert kept.status == OrderStatus.AWAITING_PAYMENT and units.of(OrderStatusChanged) == []


def test_support_news_goes_into_the_owners_timeline_once(units, order):
    created = order()
    answered = SupportRequestAnswered(
        request_id="r1", order_id=created.id, account_id=ALICE, kind="question", answer="One payment only."
    )
    for event in (answered, answered, answered.model_copy(update={"event_id": "x", "account_id": BOB})):
        said = timeline.of_answer(event.code, event.params, event.answer)
        use_cases.note_event(units, event, "support_answered", said, T0)
    kept = use_cases.get_order(units, ALICE, created.id)
    assert [(e.kind, e.said.params, e.detail) for e in kept.timeline][1:] == [
        ("support_answered", {"text": "One payment only."}, "Support answered: One payment only.")
    ]


def test_an_extensions_settled_payment_is_left_to_support(units, order):
    created = order()
    use_cases.apply_payments_settled(units, [settled(created).model_copy(update={"extension_id": "x1"})], T0)
    assert use_cases.get_order(units, ALICE, created.id).status == OrderStatus.AWAITING_PAYMENT
    assert units.of(PaymentRefused) == [] and units.of(OrderStatusChanged) == []


# --- the sweep leaves alone an order a payment can still arrive for ------------------------------------

SWEEP_AT = T0 + TTL


def instructions(created, expires_at: datetime, payment_id: str = "p1") -> PaymentInstructionsCreated:
    return PaymentInstructionsCreated(
        payment_id=payment_id, account_id=ALICE, purpose="order", order_id=created.id, asset="BTC",
        network="bitcoin", amount="0.00378", amount_base_units=378_000, amount_usd_cents=18_900,
        expires_at=expires_at, occurred_at=T0,
    )  # fmt: skip


def moved(created, status: str, at: datetime, payment_id: str = "p1") -> PaymentStatusChanged:
    return PaymentStatusChanged(
        payment_id=payment_id, account_id=ALICE, purpose="order", order_id=created.id, status=status,
        previous_status="awaiting_transfer", occurred_at=at,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("events", "cancelled"),
    [
        (lambda o: [instructions(o, SWEEP_AT + timedelta(microseconds=1))], False),  # instructions still stand
        (lambda o: [instructions(o, SWEEP_AT)], True),  # they ended as the order lapsed
        (lambda o: [instructions(o, SWEEP_AT), moved(o, "seen", T0)], False),
        (lambda o: [instructions(o, SWEEP_AT), moved(o, "confirming", T0)], False),
        (lambda o: [instructions(o, SWEEP_AT), moved(o, "seen", T0), moved(o, "underpaid", SWEEP_AT)], True),
        (lambda o: [instructions(o, SWEEP_AT), moved(o, "expired", SWEEP_AT)], True),
        # Out of order: the newer status stands.
        (lambda o: [moved(o, "expired", SWEEP_AT), moved(o, "confirming", T0), instructions(o, SWEEP_AT)], True),
        (lambda o: [moved(o, "confirming", T0 + timedelta(hours=1)), moved(o, "seen", T0)], False),
        # Another order's payment, a top-up: nothing to do with this order.
        (lambda o: [moved(o, "seen", T0).model_copy(update={"purpose": "topup"})], True),
    ],
    ids=["standing", "ended", "seen", "confirming", "underpaid", "expired", "late-expired", "late-seen", "topup"],
)
def test_the_sweep_leaves_alone_an_order_a_payment_can_still_arrive_for(units, order, events, cancelled):
    created = order()
    for event in events(created):
        use_cases.follow_payments(units, [event])
    assert use_cases.cancel_unpaid_orders(units, SWEEP_AT, TTL, batch=10) == int(cancelled)
    status = use_cases.get_order(units, ALICE, created.id).status
    assert status == (OrderStatus.CANCELLED if cancelled else OrderStatus.AWAITING_PAYMENT)
