"""the delivery wishes given with an order, and the rental's dates from provisioning

Revision ID: 0002_rental
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

import kernodeck_kit.types

revision = "0002_rental"
down_revision = "0001"
branch_labels = None
depends_on = None

COLUMNS = ("ssh_public_key", "preparation_note", "delivered_at", "starts_at", "ends_at")


def upgrade() -> None:
    with op.batch_alter_table("orders") as batch_op:
        batch_op.add_column(sa.Column("ssh_public_key", sa.String(), nullable=True))
        batch_op.add_column(sa.Column("preparation_note", sa.String(), nullable=True))
        for name in COLUMNS[2:]:
            batch_op.add_column(sa.Column(name, kernodeck_kit.types.UtcDateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("orders") as batch_op:
        for name in reversed(COLUMNS):
            batch_op.drop_column(name)
