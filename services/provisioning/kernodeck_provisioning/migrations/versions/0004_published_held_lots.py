"""the lots unpaid holds set aside, as last announced to the catalog

Revision ID: 0004_published_held_lots
Revises: 0003_node_isolation
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_published_held_lots"
down_revision = "0003_node_isolation"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("model_copies") as batch_op:
        batch_op.add_column(sa.Column("published_held_lots", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("model_copies") as batch_op:
        batch_op.drop_column("published_held_lots")
