"""Support's use cases in memory: requests, the queue, answers, extensions confirmed and refused."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import (
    ExtensionConfirmed,
    ExtensionPaid,
    ExtensionPaymentRefused,
    PaymentSettled,
    RentalExtended,
    RentalExtensionRefused,
    SupportRequestAnswered,
    SupportRequestOpened,
)
from kernodeck_kit.paging import Page
from kernodeck_support import use_cases
from kernodeck_support.domain import request_key
from services.support.tests.memory import memory_units

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
DUE = "2026-12-03T12:00:00Z"
H100_7_DAYS_CENTS = 42000


class Orders:
    """Orders as support asks it: each account sees only its own."""

    def __init__(self):
        self.orders = {}

    def add(self, order_id, account_id, status="ready", ends_at="2026-12-04T12:00:00Z", lots=2):
        summary = {"model": "h100", "lots": lots, "preparation": "pytorch"}
        self.orders[order_id] = {"id": order_id, "account_id": account_id, "status": status, "summary": summary,
                                 "rental": {"ends_at": ends_at} if ends_at else None}  # fmt: skip

    def __call__(self, account_id, order_id):
        order = self.orders.get(order_id)
        if order is None or order["account_id"] != account_id:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
        return order


class Topups:
    """Payments as support asks it about a top-up: each account sees only its own."""

    def __init__(self):
        self.owners = {"t1": "alice"}

    def __call__(self, account_id, topup_id):
        if self.owners.get(topup_id) != account_id:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such top-up")
        return {"id": topup_id}


def price_of(order, extra_days):
    assert (order["summary"]["model"], extra_days) == ("h100", 7)
    return H100_7_DAYS_CENTS * order["summary"]["lots"]


@pytest.fixture
def units():
    return memory_units()


@pytest.fixture
def orders():
    orders = Orders()
    orders.add("o1", "alice")
    return orders


def open_(
    units, orders, kind="question", message="did I pay twice?", at=NOW, request_id=None, about=("o1", None), **fields
):
    request_id = request_id or f"r{len(units.state.requests) + 1}"
    return use_cases.open_request(units, request_id, "alice", about, kind, message, fields, at, orders, Topups())


def test_a_request_is_recorded_and_announced(units, orders):
    request = open_(units, orders, "incident", "it fails", first_error="ImportError: libcudart.so.12")
    assert units.state.requests[request.id].details.first_error == "ImportError: libcudart.so.12"
    (opened,) = units.of(SupportRequestOpened)
    assert (opened.request_id, opened.order_id, opened.account_id, opened.kind) == (
        request.id,
        "o1",
        "alice",
        "incident",
    )


def test_nothing_is_stored_for_a_secret_or_another_customers_order(units, orders):
    with pytest.raises(ServiceError) as secret:
        open_(units, orders, "incident", "token below", first_error="HF_TOKEN=hf_abc123def456ghi789jkl")
    assert secret.value.code == ErrorCode.SECRET_IN_REQUEST
    orders.add("o2", "bob")
    for about in (("o2", None), (None, "t2")):
        with pytest.raises(ServiceError) as foreign:
            open_(units, orders, about=about)
        assert foreign.value.code == ErrorCode.NOT_FOUND
    with pytest.raises(ServiceError) as both:
        open_(units, orders, about=("o1", "t1"))
    assert both.value.errors[0]["field"] == "topup_id"
    assert units.state.requests == {} and units.emitted == []


def test_a_request_about_a_topup_or_the_account_names_no_order(units, orders):
    for about in ((None, "t1"), (None, None)):
        request = open_(units, orders, about=about)
        assert (request.order_id, request.topup_id) == about
    opened = units.of(SupportRequestOpened)
    assert [(e.order_id, e.topup_id) for e in opened] == [(None, "t1"), (None, None)]
    use_cases.answer_request(units, "op1", opened[0].request_id, "It is credited.", NOW)
    (answered,) = units.of(SupportRequestAnswered)
    assert (answered.order_id, answered.topup_id, answered.code) == (None, "t1", None)


@pytest.mark.parametrize("status", ["ended", "cancelled", "failed", "awaiting_payment", "paid", "provisioning"])
def test_an_extension_of_an_order_that_is_over_or_unpaid_is_refused(units, orders, status):
    orders.add("o1", "alice", status=status, ends_at=None)
    with pytest.raises(ServiceError) as caught:
        open_(units, orders, "extension", "7 more days", extra_days=7, due_by=DUE)
    assert caught.value.code == ErrorCode.INVALID_STATE
    assert units.state.requests == {}


def pages(read, oldest_first: bool = False) -> list[list[str]]:
    """The ids of each page of two that `read(page)` gives, following the cursors to the end."""
    shown, cursor = [], None
    while True:
        page = Page.ask(2, cursor, oldest_first=oldest_first)
        answer = page.answer(read(page), request_key, lambda request: request.id)
        shown.append(answer["items"])
        cursor = answer["next_cursor"]
        if cursor is None:
            return shown


def test_the_customer_pages_through_their_requests_newest_first(units, orders):
    for minute in range(5):
        open_(units, orders, at=NOW + timedelta(minutes=minute))
    assert pages(lambda page: use_cases.customer_requests(units, "alice", page)) == [["r5", "r4"], ["r3", "r2"], ["r1"]]
    assert pages(lambda page: use_cases.customer_requests(units, "bob", page)) == [[]]


def test_operators_page_through_the_queue_oldest_first(units, orders):
    for minute in range(5):
        open_(units, orders, at=NOW + timedelta(minutes=minute))
    use_cases.answer_request(units, "op1", "r2", "Done.", NOW)
    queue = pages(lambda page: use_cases.requests_in(units, "open", page), oldest_first=True)
    assert queue == [["r1", "r3"], ["r4", "r5"]]
    assert pages(lambda page: use_cases.requests_in(units, "answered", page), oldest_first=True) == [["r2"]]


def test_an_answer_leaves_the_open_queue_and_reaches_the_customer(units, orders):
    first = open_(units, orders)
    second = open_(units, orders, at=NOW + timedelta(minutes=1))
    queue = Page.ask(oldest_first=True)
    assert [r.id for r in use_cases.requests_in(units, None, queue)] == [first.id, second.id]  # oldest first
    use_cases.answer_request(units, "op1", first.id, "One payment settled; the second is in review.", NOW)
    assert [r.id for r in use_cases.requests_in(units, "open", queue)] == [second.id]
    assert [r.id for r in use_cases.requests_in(units, "answered", queue)] == [first.id]
    shown = use_cases.get_request(units, first.id)
    assert [a.text for a in shown.answers] == ["One payment settled; the second is in review."]
    (answered,) = units.of(SupportRequestAnswered)
    assert (answered.request_id, answered.answer) == (first.id, "One payment settled; the second is in review.")
    with pytest.raises(ServiceError):
        use_cases.requests_in(units, "closed", queue)


def test_an_answer_must_be_text_and_the_request_must_exist(units, orders):
    request = open_(units, orders)
    for text in ("", "   ", "x" * 4001, None):
        with pytest.raises(ServiceError):
            use_cases.answer_request(units, "op1", request.id, text, NOW)
    use_cases.answer_request(units, "op1", request.id, "x" * 4000, NOW)
    with pytest.raises(ServiceError) as missing:
        use_cases.answer_request(units, "op1", "nope", "hello", NOW)
    assert missing.value.code == ErrorCode.NOT_FOUND


def confirm(units, orders, request_id, at=NOW, extension_id="x1", note=None):
    return use_cases.confirm_extension(units, "op1", request_id, note, at, extension_id, orders, price_of)


def test_an_operators_words_holding_a_secret_are_refused_and_nothing_is_stored(units, orders):
    question = open_(units, orders)
    extension = open_(units, orders, "extension", "7 more days", extra_days=7, due_by=DUE)
    secret = "ssh with password=Hunter2024"
    refusals = {
        "text": lambda: use_cases.answer_request(units, "op1", question.id, secret, NOW),
        "note": lambda: confirm(units, orders, extension.id, note=secret),
        "reason": lambda: use_cases.refuse_extension(units, "op1", extension.id, secret, NOW),
    }
    for field, call in refusals.items():
        with pytest.raises(ServiceError) as caught:
            call()
        assert caught.value.code == ErrorCode.SECRET_IN_REQUEST
        assert caught.value.errors == [
            {"field": field, "message": "looks like a password: remove it and send the answer again"}
        ]
    assert [(r.status, r.answers, r.decision) for r in units.state.requests.values()] == [("open", [], None)] * 2
    assert units.state.extensions == {} and units.of(SupportRequestAnswered) == units.of(ExtensionConfirmed) == []
    confirm(units, orders, extension.id, note="Booked: the node is yours until the new end.")
    assert units.of(ExtensionConfirmed) and units.state.requests[extension.id].status == "answered"


def test_a_confirmed_extension_is_priced_from_the_catalog_for_every_lot(units, orders):
    request = open_(units, orders, "extension", "7 more days please", extra_days=7, due_by=DUE)
    extension = confirm(units, orders, request.id)
    assert (extension.price_usd_cents, extension.status, extension.extra_days) == (
        2 * H100_7_DAYS_CENTS,
        "confirmed",
        7,
    )
    (confirmed,) = units.of(ExtensionConfirmed)
    assert (confirmed.extension_id, confirmed.price_usd_cents, confirmed.due_by) == ("x1", 84000, extension.due_by)
    answered = units.of(SupportRequestAnswered)[-1]
    assert (answered.answer, answered.code) == ("", "extension_confirmed")
    assert answered.params == {"days": 7, "price_usd": "840.00", "due_by": "2026-12-03T12:00:00Z"}
    assert [e.id for e in use_cases.order_extensions(units, "alice", ["o1"])] == ["x1"]
    assert use_cases.order_extensions(units, "bob", ["o1"]) == []
    with pytest.raises(ServiceError) as twice:
        confirm(units, orders, request.id, extension_id="x2")
    assert twice.value.code == ErrorCode.INVALID_STATE


def test_an_extension_is_not_confirmed_past_its_due_date_or_once_the_order_is_over(units, orders):
    late = open_(units, orders, "extension", "m", extra_days=7, due_by=DUE)
    with pytest.raises(ServiceError):
        confirm(units, orders, late.id, at=datetime(2026, 12, 3, 12, 0, 1, tzinfo=UTC))
    ended = open_(units, orders, "extension", "m", extra_days=7, due_by=DUE)
    orders.add("o1", "alice", status="ended")
    with pytest.raises(ServiceError) as over:
        confirm(units, orders, ended.id)
    assert over.value.code == ErrorCode.INVALID_STATE
    assert units.state.extensions == {} and units.of(ExtensionConfirmed) == []


def test_a_refused_extension_is_answered_with_the_reason(units, orders):
    request = open_(units, orders, "extension", "m", extra_days=7, due_by=DUE)
    refused = use_cases.refuse_extension(units, "op1", request.id, "The node is booked after your term.", NOW)
    assert (refused.decision, refused.status, refused.answers[-1].text, refused.answers[-1].code) == (
        "refused", "answered", "The node is booked after your term.", "extension_refused",
    )  # fmt: skip
    with pytest.raises(ServiceError):
        confirm(units, orders, request.id)
    question = open_(units, orders)
    with pytest.raises(ServiceError):
        use_cases.refuse_extension(units, "op1", question.id, "no", NOW)


def settled(extension_id="x1", payment_id="pay1", cents=84000, account_id="alice") -> PaymentSettled:
    return PaymentSettled(
        payment_id=payment_id, order_id="o1", extension_id=extension_id, account_id=account_id,
        amount_usd_cents=cents, method="balance",
    )  # fmt: skip


@pytest.fixture
def confirmed(units, orders):
    request = open_(units, orders, "extension", "7 more days", extra_days=7, due_by=DUE)
    return confirm(units, orders, request.id)


def refunds(units) -> list[tuple[str, int, str]]:
    return [(e.payment_id, e.amount_usd_cents, e.reason) for e in units.of(ExtensionPaymentRefused)]


def test_a_paid_extension_is_announced_once_and_applied_when_the_rental_moves(units, orders, confirmed):
    payment = settled()
    assert use_cases.extension_payment_settled(units, payment, NOW, orders) is True
    assert use_cases.extension_payment_settled(units, payment, NOW, orders) is False  # redelivered
    (paid,) = units.of(ExtensionPaid)
    assert (paid.extension_id, paid.order_id, paid.extra_days) == ("x1", "o1", 7)
    assert units.state.extensions["x1"].status == "paid" and units.state.extensions["x1"].payment_id == "pay1"
    moved = RentalExtended(order_id="o1", account_id="alice", extension_id="x1", ends_at=NOW + timedelta(days=10))
    use_cases.extension_applied(units, moved, NOW)
    assert units.state.extensions["x1"].status == "applied" and refunds(units) == []


def test_a_second_payment_of_a_paid_extension_goes_back_to_the_balance(units, orders, confirmed):
    use_cases.extension_payment_settled(units, settled(), NOW, orders)
    assert use_cases.extension_payment_settled(units, settled(payment_id="pay2"), NOW, orders) is False
    assert refunds(units) == [("pay2", 84000, "extension_paid")]
    assert units.state.extensions["x1"].status == "paid" and len(units.of(ExtensionPaid)) == 1


def test_a_payment_past_the_due_date_or_once_the_order_is_over_is_refunded(units, orders, confirmed):
    late = datetime(2026, 12, 3, 12, 0, 1, tzinfo=UTC)
    assert use_cases.extension_payment_settled(units, settled(), late, orders) is False
    assert refunds(units) == [("pay1", 84000, "past_due_date")]
    assert units.state.extensions["x1"].status == "refunded"
    orders.add("o1", "alice", status="ended")
    use_cases.extension_payment_settled(units, settled(extension_id="nope", payment_id="pay3"), NOW, orders)
    assert refunds(units)[-1] == ("pay3", 84000, "unknown_extension")
    assert units.of(ExtensionPaid) == []


def test_a_payment_for_an_order_that_ended_is_refunded(units, orders, confirmed):
    orders.add("o1", "alice", status="ended")
    use_cases.extension_payment_settled(units, settled(), NOW, orders)
    assert refunds(units) == [("pay1", 84000, "order_ended")]


def test_another_accounts_payment_does_not_pay_the_extension(units, orders, confirmed):
    orders.add("o1", "bob")  # as orders would answer bob about his own order o1
    use_cases.extension_payment_settled(units, settled(account_id="bob"), NOW, orders)
    assert refunds(units) == [("pay1", 84000, "unknown_extension")]
    assert units.state.extensions["x1"].status == "confirmed"


def test_a_paid_extension_the_rental_refused_is_refunded_once(units, orders, confirmed):
    use_cases.extension_payment_settled(units, settled(), NOW, orders)
    refused = RentalExtensionRefused(order_id="o1", account_id="alice", extension_id="x1", reason="ended")
    use_cases.extension_not_applied(units, refused, NOW)
    use_cases.extension_not_applied(units, refused, NOW)
    assert refunds(units) == [("pay1", 84000, "rental_ended")]
    assert units.state.extensions["x1"].status == "refunded"


class NewOrders:
    """Orders recording a new order for the account, as support asks it for a change of configuration."""

    def __init__(self):
        self.made = []

    def __call__(self, account_id, configuration, like):
        self.made.append((account_id, configuration, like["id"]))
        summary = {"lots": configuration.lots, "model_name": "NVIDIA H200 SXM", "duration_days": 7,
                   "total_usd_cents": 57900 * configuration.lots}  # fmt: skip
        return {"id": f"new{len(self.made)}", "summary": summary}


def test_a_change_of_configuration_is_confirmed_as_a_new_order_at_the_catalogs_price(units, orders):
    asked = open_(units, orders, "extension", "two H200 instead", configuration="2 x H200 for a week", due_by=DUE)
    new_orders = NewOrders()
    h200 = use_cases.Configuration("h200", 2, 7)
    with pytest.raises(ServiceError):  # it asks for no extra days
        confirm(units, orders, asked.id)
    confirmed = use_cases.confirm_configuration(units, "op1", asked.id, h200, None, NOW, orders, new_orders)
    assert new_orders.made == [("alice", h200, "o1")]
    assert (confirmed.decision, confirmed.answers[-1].code, confirmed.answers[-1].text) == (
        "confirmed", "configuration_confirmed", "",
    )  # fmt: skip
    (answered,) = units.of(SupportRequestAnswered)
    assert answered.params == {
        "new_order_id": "new1", "lots": 2, "model_name": "NVIDIA H200 SXM", "days": 7, "total_usd": "1158.00",
    }  # fmt: skip
    with pytest.raises(ServiceError) as twice:
        use_cases.confirm_configuration(units, "op1", asked.id, h200, None, NOW, orders, new_orders)
    assert twice.value.code == ErrorCode.INVALID_STATE and len(new_orders.made) == 1  # no second order


def test_a_change_of_configuration_is_not_confirmed_once_the_order_is_over(units, orders):
    asked = open_(units, orders, "extension", "m", configuration="2 lots", due_by=DUE)
    orders.add("o1", "alice", status="ended")
    new_orders = NewOrders()
    with pytest.raises(ServiceError) as over:
        use_cases.confirm_configuration(
            units, "op1", asked.id, use_cases.Configuration("h100", 2, 3), None, NOW, orders, new_orders
        )
    assert over.value.code == ErrorCode.INVALID_STATE and new_orders.made == []
