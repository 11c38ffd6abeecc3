"""requests about a top-up or the account (order_id optional, topup_id), and answers that say what support decided
as a code with parameters beside the operator's words

The confirmations written before as one English sentence ("Confirmed: 7 more days for 1234.50 USD, to pay on the
order page before <time>. The new end counts once it is paid.", the operator's note on the lines after) become the
code `extension_confirmed` with its terms, the note as the answer's text (the form is copied here, not imported).

Revision ID: 0003_subjects_and_answer_codes
Revises: 0002_processed_at_index
"""

import re
from contextlib import contextmanager

import sqlalchemy as sa
from alembic import op

revision = "0003_subjects_and_answer_codes"
down_revision = "0002_processed_at_index"
branch_labels = None
depends_on = None

CONFIRMED = re.compile(
    r"^Confirmed: (\d+) more days for (\d+\.\d\d) USD, to pay on the order page before (\S+)\."
    r" The new end counts once it is paid\.(?:\n(.*))?$",
    re.DOTALL,
)


CHILDREN = ("support_answers", "extensions")  # the tables whose rows refer to support_requests


@contextmanager
def _children_aside():
    """SQLite rebuilds support_requests to change a column, and its foreign keys, checked on every statement in
    the migration's transaction, refuse to drop a table that rows refer to: those rows are set aside meanwhile."""
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        yield
        return
    tables = [sa.Table(name, sa.MetaData(), autoload_with=bind) for name in CHILDREN]
    kept = [(table, [dict(row) for row in bind.execute(sa.select(table)).mappings()]) for table in tables]
    for table in tables:
        bind.execute(table.delete())
    yield
    for table, rows in kept:
        if rows:
            bind.execute(table.insert(), rows)


def upgrade() -> None:
    with _children_aside(), op.batch_alter_table("support_requests") as batch_op:
        batch_op.alter_column("order_id", existing_type=sa.String(length=32), nullable=True)
        batch_op.add_column(sa.Column("topup_id", sa.String(length=32), nullable=True))
        batch_op.create_index("ix_support_requests_topup_id", ["topup_id"], unique=False)
    with op.batch_alter_table("support_answers") as batch_op:
        batch_op.add_column(sa.Column("code", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("params", sa.JSON(), nullable=False, server_default="{}"))
    bind = op.get_bind()
    answers = sa.table(
        "support_answers",
        sa.column("id", sa.Integer),
        sa.column("text", sa.String),
        sa.column("code", sa.String),
        sa.column("params", sa.JSON),
    )
    confirmations = bind.execute(
        sa.select(answers.c.id, answers.c.text).where(answers.c.text.like("Confirmed: %"))
    ).all()
    for row in confirmations:
        match = CONFIRMED.match(row.text)
        if match is None:
            continue
        days, price, due_by, note = match.groups()
        terms = {"days": int(days), "price_usd": price, "due_by": due_by}
        bind.execute(
            answers.update()
            .where(answers.c.id == row.id)
            .values(code="extension_confirmed", params=terms, text=note or "")
        )
    with op.batch_alter_table("support_answers") as batch_op:
        batch_op.alter_column("params", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("support_answers") as batch_op:
        batch_op.drop_column("params")
        batch_op.drop_column("code")
    with _children_aside(), op.batch_alter_table("support_requests") as batch_op:
        batch_op.drop_index("ix_support_requests_topup_id")
        batch_op.drop_column("topup_id")
        batch_op.alter_column("order_id", existing_type=sa.String(length=32), nullable=False)
