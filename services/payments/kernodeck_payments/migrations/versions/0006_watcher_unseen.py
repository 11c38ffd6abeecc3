"""watcher_reports.unseen: the kinds of transfer a network's watcher cannot see (its method degraded)

Revision ID: 0006_watcher_unseen
Revises: 0005_transfer_epoch
Create Date: 2026-12-01 14:30:00.000000
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0006_watcher_unseen'
down_revision = '0005_transfer_epoch'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('watcher_reports') as batch:
        batch.add_column(
            sa.Column('unseen', sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False, server_default='')
        )


def downgrade() -> None:
    with op.batch_alter_table('watcher_reports') as batch:
        batch.drop_column('unseen')
