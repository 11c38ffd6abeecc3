"""The kit's tables: the outbox and processed_events, in every service's database

Revision ID: kit_0001_tables
Revises:
Create Date: 2026-12-07

The first revision of the kit's own branch: every service's first revision depends on it, so that a change to
these tables is one revision here, applied to every service's database by `kernodeck_kit.migrations.upgrade`.
A database made before the kit owned them had them from its service's first revisions, which alembic counts
as having applied this one.
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

import kernodeck_kit.types

revision = "kit_0001_tables"
down_revision = None
branch_labels = ("kit",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("source", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("event_type", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("payload", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", kernodeck_kit.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("sent_at", kernodeck_kit.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("event_id"),
    )
    op.create_index("ix_outbox_sent_at", "outbox", ["sent_at"], unique=False)
    op.create_table(
        "processed_events",
        sa.Column("consumer", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("event_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("processed_at", kernodeck_kit.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("consumer", "event_id"),
    )
    op.create_index("ix_processed_events_processed_at", "processed_events", ["processed_at"])


def downgrade() -> None:
    op.drop_table("processed_events")
    op.drop_table("outbox")
