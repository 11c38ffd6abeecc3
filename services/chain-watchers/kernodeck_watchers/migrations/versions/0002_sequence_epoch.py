"""watcher_sequences.epoch: event ordering that survives a new or restored watcher database

Revision ID: 0002_sequence_epoch
Revises: 0001
Create Date: 2026-12-01 14:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = '0002_sequence_epoch'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('watcher_sequences') as batch:
        batch.add_column(sa.Column('epoch', sa.BigInteger(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('watcher_sequences') as batch:
        batch.drop_column('epoch')
