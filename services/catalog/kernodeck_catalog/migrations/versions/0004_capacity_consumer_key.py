"""processed_events: the capacity consumer known by its event's class, as the kit now derives the key

Revision ID: 0004_capacity_consumer_key
Revises: 0003_processed_at_index
"""

from alembic import op

revision = "0004_capacity_consumer_key"
down_revision = "0003_processed_at_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("UPDATE processed_events SET consumer = 'provisioning.capacity_changed' WHERE consumer = 'capacity'")


def downgrade() -> None:
    op.execute("UPDATE processed_events SET consumer = 'capacity' WHERE consumer = 'provisioning.capacity_changed'")
