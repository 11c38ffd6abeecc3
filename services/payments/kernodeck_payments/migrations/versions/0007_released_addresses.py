"""address_key nullable: a Solana pool address whose intent received nothing goes back to the pool

Revision ID: 0007_released_addresses
Revises: 0006_watcher_unseen
Create Date: 2026-12-01 13:50:00.000000
"""

import sqlmodel
from alembic import op

revision = '0007_released_addresses'
down_revision = '0006_watcher_unseen'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('payment_intents') as batch_op:
        batch_op.alter_column('address_key', existing_type=sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True)


def downgrade() -> None:
    op.execute("UPDATE payment_intents SET address_key = address WHERE address_key IS NULL")
    with op.batch_alter_table('payment_intents') as batch_op:
        batch_op.alter_column('address_key', existing_type=sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False)
