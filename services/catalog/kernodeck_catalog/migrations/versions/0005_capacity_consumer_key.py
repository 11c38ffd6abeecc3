"""processed_events: the capacity consumer known by its event's class, as the kit now derives the key

Revision ID: 0005_capacity_consumer_key
Revises: 0004_held_lots
"""

from alembic import op

revision = "0005_capacity_consumer_key"
down_revision = "0004_held_lots"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("UPDATE processed_events SET consumer = 'provisioning.capacity_changed' WHERE consumer = 'capacity'")


def downgrade() -> None:
    op.execute("UPDATE processed_events SET consumer = 'capacity' WHERE consumer = 'provisioning.capacity_changed'")
