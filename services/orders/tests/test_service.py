"""The orders service on the broker and PostgreSQL: RPC, events and the sweep's timer; the rules are in
test_use_cases.py."""

from datetime import UTC, datetime, timedelta

import eventlet
import pytest
from nameko.standalone.events import event_dispatcher
from nameko.standalone.rpc import ServiceRpcProxy
from nameko.testing.services import entrypoint_hook
from nameko.testing.utils import get_extension
from sqlalchemy import text

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import PaymentSettled, PaymentStatusChanged
from kernodeck_kit.db import make_engine
from kernodeck_kit.testing import service_config
from kernodeck_kit.transport.calls import RemoteServiceError
from kernodeck_kit.transport.dependencies import Database
from kernodeck_orders.config import OrdersSettings
from kernodeck_orders.service import OrdersService

ALICE, BOB = "acct-alice", "acct-bob"
PAST_THE_TTL = 61  # minutes; the test config sets a 60-minute TTL


def refusal(call, *args) -> ServiceError:
    with pytest.raises(RemoteServiceError) as caught:
        call(*args)
    return caught.value.service_error


def execute(url: str, sql: str, **params) -> list:
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            result = conn.execute(text(sql), params)
            return result.all() if result.returns_rows else []
    finally:
        engine.dispose()


def backdate(database_url: str, order_id: str, minutes: int) -> None:
    execute(
        database_url,
        "UPDATE orders SET created_at = :at WHERE id = :id",
        at=datetime.now(UTC) - timedelta(minutes=minutes),
        id=order_id,
    )


def test_health(orders):
    assert orders.health() == {"service": "orders"}


def test_create_get_and_list(orders, events):
    first = orders.create_order(ALICE, "h100", 3, 1, "ubuntu")
    second = orders.create_order(ALICE, "b200", 7, 2, "pytorch")

    assert second["status"] == "awaiting_payment"
    assert second["account_id"] == ALICE
    assert second["summary"] == {
        "model": "b200",
        "model_name": "NVIDIA B200",
        "backend": "cuda",
        "duration_days": 7,
        "lots": 2,
        "gpus_per_lot": 2,
        "total_gpus": 4,
        "preparation": "pytorch",
        "lot_price_usd_cents": 199900,
        "total_usd_cents": 399800,
    }
    assert (second["rental"], second["access"]) == (None, None)
    assert [(e["kind"], e["at"]) for e in second["timeline"]] == [("created", second["created_at"])]
    assert second["created_at"].endswith("Z") and datetime.fromisoformat(second["created_at"]).tzinfo is not None

    assert orders.get_order(ALICE, second["id"]) == second
    assert orders.list_orders(ALICE) == {"items": [second, first], "next_cursor": None}
    assert orders.list_orders(BOB) == {"items": [], "next_cursor": None}

    created = events.wait("order_created", count=2)
    assert {e["order_id"]: e["total_usd_cents"] for e in created} == {first["id"]: 18900, second["id"]: 399800}
    assert created[0]["account_id"] == ALICE and created[0]["event_id"]


def test_the_list_comes_in_stable_pages_newest_first(orders):
    made = [orders.create_order(ALICE, "h100", 3, 1, "ubuntu")["id"] for _ in range(5)]
    first = orders.list_orders(ALICE, limit=2)
    assert [o["id"] for o in first["items"]] == made[:-3:-1]
    orders.cancel_order(ALICE, made[0])  # five unpaid orders are an account's most
    newer = orders.create_order(ALICE, "h100", 3, 1, "ubuntu")["id"]  # shifts nothing after the first page
    second = orders.list_orders(ALICE, limit=2, cursor=first["next_cursor"])
    last = orders.list_orders(ALICE, limit=2, cursor=second["next_cursor"])
    assert [o["id"] for o in second["items"] + last["items"]] == made[-3::-1]
    assert last["next_cursor"] is None
    assert [o["id"] for o in orders.list_orders(ALICE, limit=1)["items"]] == [newer]
    assert len(orders.list_orders(ALICE, limit=200)["items"]) == 6
    assert orders.list_orders(BOB, cursor=first["next_cursor"]) == {"items": [], "next_cursor": None}
    for limit in (0, 201, "2"):
        assert refusal(orders.list_orders, ALICE, limit).errors[0]["field"] == "limit"
    for cursor in ("not-a-cursor", first["next_cursor"][:-2], 7):
        assert refusal(orders.list_orders, ALICE, 50, cursor).errors[0]["field"] == "cursor"


def test_the_price_is_fixed_when_the_order_is_recorded(orders, catalog):
    order = orders.create_order(ALICE, "h100", 7, 3, "notebook")
    catalog["h100"][3][7] = 99999

    assert orders.create_order(ALICE, "h100", 7, 3, "notebook")["summary"]["total_usd_cents"] == 3 * 99999
    kept = orders.get_order(ALICE, order["id"])["summary"]
    assert (kept["lot_price_usd_cents"], kept["total_usd_cents"]) == (42000, 3 * 42000)


def test_the_catalogs_refusal_comes_through_as_it_is(orders):
    error = refusal(orders.create_order, ALICE, "tpu-v5", 3, 1, "ubuntu")
    assert error.code == "validation_error"
    assert error.detail == "the order configuration is not valid"
    assert error.errors == [{"field": "model", "message": "unknown model 'tpu-v5'"}]
    assert error.retry_after is None
    assert orders.list_orders(ALICE) == {"items": [], "next_cursor": None}


def test_without_the_catalog_the_answer_is_service_unavailable(container_factory, config):
    container_factory(OrdersService, config).start()
    with ServiceRpcProxy("orders", config) as orders:
        assert refusal(orders.create_order, ALICE, "h100", 3, 1, "ubuntu").code == "service_unavailable"


def test_the_sweep_runs_on_its_configured_interval(container_factory, catalog, config, rabbit_config, database_url):
    quick = OrdersSettings(unpaid_ttl_minutes=60, sweep_interval_s=0.1)
    container_factory(OrdersService, service_config(rabbit_config, database_url, quick)).start()
    with ServiceRpcProxy("orders", config) as orders:
        order = orders.create_order(ALICE, "h100", 3, 1, "ubuntu")
        backdate(database_url, order["id"], minutes=PAST_THE_TTL)
        with eventlet.Timeout(5):
            while orders.get_order(ALICE, order["id"])["status"] != "cancelled":
                eventlet.sleep(0.05)


def test_an_event_the_broker_refused_is_delivered_by_the_relay(orders, orders_container, events, database_url):
    relay = get_extension(orders_container, Database).relay
    publish, attempts = relay.publish, []

    def broker_down_once(row):
        attempts.append(row.event_id)
        if len(attempts) == 1:
            raise ConnectionError("broker unreachable")
        publish(row)

    relay.publish = broker_down_once
    order = orders.create_order(ALICE, "h100", 3, 1, "ubuntu")

    [created] = events.wait("order_created")
    assert created["order_id"] == order["id"]
    assert len(attempts) == 2 and attempts[0] == attempts[1] == created["event_id"]
    [(sent_at, failures)] = execute(database_url, "SELECT sent_at, attempts FROM outbox")
    assert sent_at is not None and failures == 1
    assert len(events.wait("order_created", count=2, seconds=0.5)) == 1


@pytest.mark.parametrize(("short", "status", "refused"), [(1, "awaiting_payment", ["short_of_total"]), (0, "paid", [])])
def test_a_settled_payment_short_of_the_total_is_refused_on_the_broker(orders, events, config, short, status, refused):
    order = orders.create_order(ALICE, "h100", 3, 1, "ubuntu")
    total = order["summary"]["total_usd_cents"]
    settled = PaymentSettled(
        payment_id="p1", order_id=order["id"], account_id=ALICE, amount_usd_cents=total - short, method="BTC/bitcoin"
    )
    event_dispatcher(config)(settled.source, settled.type, settled.to_message())
    expected_event = "payment_refused" if refused else "order_status_changed"
    events.wait(expected_event, count=1)
    assert orders.get_order(ALICE, order["id"])["status"] == status
    assert [e["reason"] for e in events.wait("payment_refused", count=1, seconds=0.2)] == refused


def test_the_sweep_leaves_alone_an_order_while_its_payment_is_confirming(
    orders, orders_container, config, database_url
):
    order = orders.create_order(ALICE, "h100", 3, 1, "ubuntu")
    backdate(database_url, order["id"], minutes=PAST_THE_TTL)
    dispatch = event_dispatcher(config)

    def tell(status: str) -> None:
        event = PaymentStatusChanged(
            payment_id="p1", account_id=ALICE, purpose="order", order_id=order["id"], status=status,
            previous_status="seen",
        )  # fmt: skip
        dispatch(event.source, event.type, event.to_message())
        with eventlet.Timeout(5):
            while execute(database_url, "SELECT status FROM payments_in_flight") != [(status,)]:
                eventlet.sleep(0.05)

    tell("confirming")
    with entrypoint_hook(orders_container, "cancel_unpaid_orders") as sweep:
        assert sweep() == 0
    assert orders.get_order(ALICE, order["id"])["status"] == "awaiting_payment"

    tell("underpaid")  # nothing more can arrive: the order lapses
    with entrypoint_hook(orders_container, "cancel_unpaid_orders") as sweep:
        assert sweep() == 1
    assert orders.get_order(ALICE, order["id"])["status"] == "cancelled"


def test_ten_orders_at_once_leave_an_account_its_five_unpaid_and_cancelling_one_frees_a_place(orders, config):
    """The defaults (ORDERS_UNPAID_PER_ACCOUNT=5) over the broker, on PostgreSQL: the account's orders wait for
    each other, so a burst cannot pass the limit."""

    def create(_):
        with ServiceRpcProxy("orders", config) as proxy:
            try:
                return proxy.create_order(ALICE, "h100", 3, 1, "ubuntu")["id"]
            except RemoteServiceError as refused:
                return refused.code

    made = list(eventlet.GreenPool(10).imap(create, range(10)))
    created = [answer for answer in made if answer != "unpaid_orders_limit"]
    assert len(created) == 5
    assert orders.create_order(BOB, "h100", 3, 1, "ubuntu")["status"] == "awaiting_payment"
    orders.cancel_order(ALICE, created[0])
    assert orders.create_order(ALICE, "h100", 3, 1, "ubuntu")["status"] == "awaiting_payment"


def test_an_account_creates_twenty_orders_an_hour_then_is_told_when_to_come_back(orders, database_url):
    for _ in range(20):
        orders.cancel_order(ALICE, orders.create_order(ALICE, "h100", 3, 1, "ubuntu")["id"])
    error = refusal(orders.create_order, ALICE, "h100", 3, 1, "ubuntu")
    assert error.code == "too_many_requests" and 0 < error.retry_after <= 3600
    execute(database_url, "UPDATE orders SET created_at = created_at - interval '1 hour' WHERE id IN "
            "(SELECT id FROM orders ORDER BY created_at LIMIT 1)")  # fmt: skip
    assert orders.create_order(ALICE, "h100", 3, 1, "ubuntu")["status"] == "awaiting_payment"
