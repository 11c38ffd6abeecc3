"""payments_in_flight: orders' copy of its orders' crypto payments, so that the unpaid sweep leaves alone an
order a payment can still arrive for

Revision ID: 0003_payments_in_flight
Revises: 0002_rental
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

import kernodeck_kit.types

revision = "0003_payments_in_flight"
down_revision = "0002_rental"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "payments_in_flight",
        sa.Column("payment_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("order_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column("status_at", kernodeck_kit.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", kernodeck_kit.types.UtcDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("payment_id"),
    )
    op.create_index("ix_payments_in_flight_order_id", "payments_in_flight", ["order_id"])


def downgrade() -> None:
    op.drop_index("ix_payments_in_flight_order_id", table_name="payments_in_flight")
    op.drop_table("payments_in_flight")
