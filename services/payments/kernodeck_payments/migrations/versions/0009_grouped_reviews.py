"""review_items.group_key and transfers: the foreign-token transfers of one address share one open item

Revision ID: 0009_grouped_reviews
Revises: 0008_processed_at_index
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_grouped_reviews"
down_revision = "0008_processed_at_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("review_items") as batch_op:
        batch_op.add_column(sa.Column("group_key", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("transfers", sa.Integer(), nullable=False, server_default="1"))
    op.create_index("ix_review_items_group_key", "review_items", ["group_key"])


def downgrade() -> None:
    op.drop_index("ix_review_items_group_key", table_name="review_items")
    with op.batch_alter_table("review_items") as batch_op:
        batch_op.drop_column("transfers")
        batch_op.drop_column("group_key")
