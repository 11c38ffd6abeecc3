"""The orders migrations: a database made at an older revision reaches the models' schema, its rows kept; the
timeline's English sentences become codes with their parameters."""

from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import MetaData, Table, select

from kernodeck_kit.db import make_engine
from kernodeck_kit.migrations import alembic_config
from kernodeck_kit.testing import assert_schema_is_the_models

PACKAGE = "kernodeck_orders"
NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
CONFIRMED = (
    "Confirmed: 7 more days for 1234.50 USD, to pay on the order page before 2026-12-24T10:00:00Z."
    " The new end counts once it is paid."
)
# What the service wrote before codes (its f-strings), and the code and parameters each becomes.
WRITTEN = [
    ("created", "", "order_recorded", {}),
    ("payment_reported", "the customer reports paying with tron", "payment_reported", {"network": "tron"}),
    ("paid", "paid: USDT/tron", "paid_crypto", {"asset": "USDT", "network": "tron"}),
    ("paid", "paid: balance", "paid_balance", {}),
    ("provisioning", "the node is being prepared", "preparing", {}),
    ("ready", "delivered; the term ends 2026-01-04T12:00:00Z", "ready", {"ends_at": "2026-01-04T12:00:00Z"}),
    ("ended", "the node was reclaimed and wiped", "ended", {}),
    ("cancelled", "customer_request", "cancelled_by_customer", {}),
    ("cancelled", "unpaid_timeout", "cancelled_unpaid", {}),
    ("failed", "no_ssh_public_key: no SSH public key; the payment is refunded to the balance", "failed_no_ssh_key", {}),
    ("failed", "no_node_passed: cpu; the payment is refunded to the balance", "failed_no_node", {}),
    ("failed", "something_else: x; the payment is refunded to the balance", "failed", {}),
    (
        "rental_ending",
        "the rental ends in 24 h (2026-01-04T12:00:00Z): export your results now",
        "rental_ending",
        {"hours": 24, "ends_at": "2026-01-04T12:00:00Z"},
    ),
    (
        "rental_extended",
        "the term now ends 2026-01-11T12:00:00Z",
        "rental_extended",
        {"ends_at": "2026-01-11T12:00:00Z"},
    ),
    ("support_request", "incident request r1 sent to support", "support_incident", {}),
    ("support_answered", "One payment only.", "support_answered", {"text": "One payment only."}),
    ("support_answered", CONFIRMED + "\nThanks.", "support_answered", {"text": "Thanks."}),
    (
        "support_answered",
        CONFIRMED,
        "extension_confirmed",
        {"days": 7, "price_usd": "1234.50", "due_by": "2026-12-24T10:00:00Z"},
    ),
    (
        "extension_confirmed",
        "extension e1 confirmed: 7 more days for 1234.50 USD, to pay by 2026-12-24T10:00:00Z; the end moves once paid",
        "extension_confirmed",
        {"days": 7, "price_usd": "1234.50", "due_by": "2026-12-24T10:00:00Z"},
    ),
    ("extension_paid", "extension e1 paid: the node is being extended by 7 days", "extension_paid", {"days": 7}),
    ("rental_ending", "a sentence of no known form", "note", {"text": "a sentence of no known form"}),
]


@pytest.fixture
def at_0004(database_at) -> str:
    return database_at(PACKAGE, "0004_processed_at_index")


def test_the_timelines_sentences_become_codes_with_their_parameters(at_0004):
    engine = make_engine(at_0004)
    with engine.begin() as conn:
        orders = Table("orders", MetaData(), autoload_with=conn)
        conn.execute(
            orders.insert(),
            {
                "id": "o1", "account_id": "a1", "status": "ended", "model": "h100", "model_name": "NVIDIA H100 SXM",
                "backend": "cuda", "duration_days": 3, "lots": 1, "gpus_per_lot": 1, "total_gpus": 1,
                "preparation": "ubuntu", "lot_price_usd_cents": 18900, "total_usd_cents": 18900,
                "created_at": NOW, "updated_at": NOW, "version": 3,
            },
        )  # fmt: skip
        timeline = Table("order_timeline", MetaData(), autoload_with=conn)
        rows = [{"order_id": "o1", "at": NOW, "kind": kind, "detail": detail} for kind, detail, _, _ in WRITTEN]
        conn.execute(timeline.insert(), rows)

    command.upgrade(alembic_config(PACKAGE, at_0004), "heads")

    with engine.begin() as conn:
        timeline = Table("order_timeline", MetaData(), autoload_with=conn)
        migrated = conn.execute(select(timeline.c.kind, timeline.c.code, timeline.c.params).order_by("id")).all()
    engine.dispose()
    assert [tuple(row) for row in migrated] == [(kind, code, params) for kind, _, code, params in WRITTEN]
    assert_schema_is_the_models(PACKAGE, at_0004)
