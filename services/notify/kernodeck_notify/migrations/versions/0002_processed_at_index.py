"""processed_events by processed_at: the hourly prune of old rows reads the index, not the whole table

Revision ID: 0002_processed_at_index
Revises: 0001_initial
"""

from alembic import op

revision = "0002_processed_at_index"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_processed_events_processed_at", "processed_events", ["processed_at"])


def downgrade() -> None:
    op.drop_index("ix_processed_events_processed_at", table_name="processed_events")
