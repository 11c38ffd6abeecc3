"""payable_orders: payments' copy of the orders, from orders' events

Revision ID: 0003_payable_orders
Revises: 0002
Create Date: 2026-12-01 11:20:00.000000
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

import kernodeck_kit.types

revision = '0003_payable_orders'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'payable_orders',
        sa.Column('order_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('account_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('status_at', kernodeck_kit.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column('total_usd_cents', sa.Integer(), nullable=True),
        sa.Column('expires_at', kernodeck_kit.types.UtcDateTime(timezone=True), nullable=True),
        sa.Column('model_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column('total_gpus', sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint('order_id'),
    )


def downgrade() -> None:
    op.drop_table('payable_orders')
