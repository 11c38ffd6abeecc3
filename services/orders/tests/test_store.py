from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, select

from kernodeck_contracts.timeline import Said, TimelineCode
from kernodeck_kit.db import make_engine
from kernodeck_kit.testing import truncate_all
from kernodeck_orders import store
from kernodeck_orders.domain import OrderStatus, PaymentInFlight, StaleOrder, new_order, transition
from services.orders.tests.conftest import SUMMARY

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
PAID = Said(TimelineCode.PAID_CRYPTO, {"asset": "BTC", "network": "bitcoin"})


@pytest.fixture
def engine(database_url):
    truncate_all(database_url)
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


def test_an_order_reads_back_as_it_was_written(engine):
    order = new_order("o1", "a1", SUMMARY, T0)
    with Session(engine) as session:
        store.add_order(session, order)
        session.commit()
    with Session(engine) as session:
        assert store.get_order(session, "o1") == order


def test_two_workers_cannot_both_move_the_same_order(engine):
    with Session(engine) as session:
        store.add_order(session, new_order("o1", "a1", SUMMARY, T0))
        session.commit()

    with Session(engine) as first, Session(engine) as second:
        mine, theirs = store.get_order(first, "o1"), store.get_order(second, "o1")
        store.save_transition(first, mine, transition(mine, OrderStatus.PAID, T0 + timedelta(minutes=1), PAID))
        first.commit()
        late = transition(theirs, OrderStatus.CANCELLED, T0 + timedelta(minutes=2), Said(TimelineCode.CANCELLED_UNPAID))
        with pytest.raises(StaleOrder):
            store.save_transition(second, theirs, late)
        second.rollback()

    with Session(engine) as session:
        order = store.get_order(session, "o1")
    assert (order.status, order.version) == (OrderStatus.PAID, 1)
    assert [e.kind for e in order.timeline] == ["created", "paid"]


def test_payments_tracked_together_keep_each_ones_newest_status_whatever_their_order(engine):
    later = T0 + timedelta(minutes=5)
    with Session(engine) as session:
        store.track_payments(session, [PaymentInFlight("p1", "o1", "awaiting_transfer", T0, later)])
        session.commit()
    with Session(engine) as session:
        store.track_payments(
            session,
            [
                PaymentInFlight("p1", "o1", "settled", T0 + timedelta(minutes=2)),
                PaymentInFlight("p1", "o1", "confirming", T0 + timedelta(minutes=1)),  # older: the status stays
                PaymentInFlight("p2", "o2", "confirming", T0),
                PaymentInFlight("p2", "o2", "settled", T0 + timedelta(minutes=1)),
            ],
        )
        session.commit()
    with Session(engine) as session:
        rows = {row.payment_id: row for row in session.exec(select(store.PaymentInFlightRow))}
    assert {key: (row.status, row.expires_at) for key, row in rows.items()} == {
        "p1": ("settled", later),
        "p2": ("settled", None),
    }


def test_unpaid_candidates_are_old_awaiting_payment_orders_oldest_first(engine):
    with Session(engine) as session:
        for order_id, age in [("recent", 10), ("older", 120), ("oldest", 600)]:
            store.add_order(session, new_order(order_id, "a1", SUMMARY, T0 - timedelta(minutes=age)))
        paid = new_order("paid", "a1", SUMMARY, T0 - timedelta(minutes=900))
        store.add_order(session, paid)
        session.flush()
        store.save_transition(session, paid, transition(paid, OrderStatus.PAID, T0, PAID))
        session.commit()
    with Session(engine) as session:
        assert store.unpaid_order_ids(session, T0 - timedelta(minutes=60), T0, limit=10) == ["oldest", "older"]
        assert store.unpaid_order_ids(session, T0 - timedelta(minutes=60), T0, limit=1) == ["oldest"]
