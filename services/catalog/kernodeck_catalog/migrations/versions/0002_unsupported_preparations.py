"""preparations a model cannot run

Revision ID: 0002_unsupported_preparations
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_unsupported_preparations"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("gpu_models") as batch_op:
        batch_op.add_column(sa.Column("unsupported_preparations", sa.String(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("gpu_models") as batch_op:
        batch_op.drop_column("unsupported_preparations")
