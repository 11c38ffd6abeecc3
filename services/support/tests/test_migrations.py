"""The support migrations: a database made at an older revision reaches the models' schema, its rows kept; an old
confirmation sentence becomes the code `extension_confirmed` with its terms, the operator's note its text."""

from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import MetaData, Table, select

from kernodeck_kit.db import make_engine
from kernodeck_kit.migrations import alembic_config
from kernodeck_kit.testing import assert_schema_is_the_models

PACKAGE = "kernodeck_support"
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
SENTENCE = (
    "Confirmed: 7 more days for 1234.50 USD, to pay on the order page before 2026-12-24T10:00:00Z."
    " The new end counts once it is paid."
)
TERMS = {"days": 7, "price_usd": "1234.50", "due_by": "2026-12-24T10:00:00Z"}


@pytest.fixture
def at_0002(database_at) -> str:
    return database_at(PACKAGE, "0002_processed_at_index")


def test_old_confirmations_become_codes_and_other_answers_stay_as_written(at_0002):
    engine = make_engine(at_0002)
    with engine.begin() as conn:
        requests = Table("support_requests", MetaData(), autoload_with=conn)
        conn.execute(
            requests.insert(),
            {"id": "r1", "account_id": "a1", "order_id": "o1", "kind": "extension", "status": "answered",
             "message": "m", "created_at": NOW, "updated_at": NOW},
        )  # fmt: skip
        answers = Table("support_answers", MetaData(), autoload_with=conn)
        written = [SENTENCE, SENTENCE + "\nThanks for asking early.", "Confirmed: an operator's own words."]
        conn.execute(answers.insert(), [{"request_id": "r1", "at": NOW, "author_id": "op", "text": t} for t in written])

    command.upgrade(alembic_config(PACKAGE, at_0002), "heads")

    with engine.begin() as conn:
        answers = Table("support_answers", MetaData(), autoload_with=conn)
        migrated = conn.execute(select(answers.c.code, answers.c.params, answers.c.text).order_by("id")).all()
        requests = Table("support_requests", MetaData(), autoload_with=conn)
        kept = conn.execute(select(requests.c.order_id, requests.c.topup_id)).all()
    engine.dispose()
    assert [tuple(row) for row in migrated] == [
        ("extension_confirmed", TERMS, ""),
        ("extension_confirmed", TERMS, "Thanks for asking early."),
        (None, {}, "Confirmed: an operator's own words."),
    ]
    assert [tuple(row) for row in kept] == [("o1", None)]
    assert_schema_is_the_models(PACKAGE, at_0002)
