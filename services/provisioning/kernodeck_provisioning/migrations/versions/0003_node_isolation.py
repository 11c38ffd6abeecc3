"""what each node provides to keep rentals apart, and the nodes a failed delivery could not be undone on yet

Revision ID: 0003_node_isolation
Revises: 0002_processed_at_index
"""

import sqlalchemy as sa
from alembic import op

import kernodeck_kit.types

revision = "0003_node_isolation"
down_revision = "0002_processed_at_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("nodes") as batch_op:
        batch_op.add_column(sa.Column("isolation", sa.String(length=16), nullable=False, server_default="unchecked"))
        batch_op.add_column(sa.Column("isolation_note", sa.String(), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("isolation_checked_at", kernodeck_kit.types.UtcDateTime(), nullable=True))
    with op.batch_alter_table("rentals") as batch_op:
        batch_op.add_column(sa.Column("leftover_nodes", sa.String(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("rentals") as batch_op:
        batch_op.drop_column("leftover_nodes")
    with op.batch_alter_table("nodes") as batch_op:
        batch_op.drop_column("isolation_checked_at")
        batch_op.drop_column("isolation_note")
        batch_op.drop_column("isolation")
