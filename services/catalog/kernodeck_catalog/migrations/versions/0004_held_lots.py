"""the lots of each model that holds for unpaid orders set aside, as provisioning counts them

Revision ID: 0004_held_lots
Revises: 0003_processed_at_index
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_held_lots"
down_revision = "0003_processed_at_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("gpu_models") as batch_op:
        batch_op.add_column(sa.Column("held_lots", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("gpu_models") as batch_op:
        batch_op.drop_column("held_lots")
