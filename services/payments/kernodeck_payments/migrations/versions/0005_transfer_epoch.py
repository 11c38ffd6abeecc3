"""chain_transfers.epoch: the watcher database's epoch of the last event applied

Revision ID: 0005_transfer_epoch
Revises: 0004_extensions
Create Date: 2026-12-01 14:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = '0005_transfer_epoch'
down_revision = '0004_extensions'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('chain_transfers') as batch:
        batch.add_column(sa.Column('epoch', sa.BigInteger(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('chain_transfers') as batch:
        batch.drop_column('epoch')
