"""extensions: intents for an extension (a longer purpose, the order it extends), and payments' copy of the
confirmed extensions, from support's events

Revision ID: 0004_extensions
Revises: 0003_payable_orders
Create Date: 2026-12-01 14:00:00.000000
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

import kernodeck_kit.types

revision = '0004_extensions'
down_revision = '0003_payable_orders'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('payment_intents') as batch_op:
        batch_op.alter_column(
            'purpose',
            existing_type=sqlmodel.sql.sqltypes.AutoString(length=8),
            type_=sqlmodel.sql.sqltypes.AutoString(length=16),
            existing_nullable=False,
        )
        batch_op.add_column(sa.Column('order_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True))
    op.create_table(
        'payable_extensions',
        sa.Column('extension_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('order_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('account_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('price_usd_cents', sa.Integer(), nullable=False),
        sa.Column('due_by', kernodeck_kit.types.UtcDateTime(timezone=True), nullable=False),
        sa.Column('paid', sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint('extension_id'),
    )


def downgrade() -> None:
    op.drop_table('payable_extensions')
    with op.batch_alter_table('payment_intents') as batch_op:
        batch_op.drop_column('order_id')
        batch_op.alter_column(
            'purpose',
            existing_type=sqlmodel.sql.sqltypes.AutoString(length=16),
            type_=sqlmodel.sql.sqltypes.AutoString(length=8),
            existing_nullable=False,
        )
