"""whether an order came with an SSH key: payments refuses to take money for an order that cannot be delivered

Revision ID: 0010_ssh_key_given
Revises: 0009_grouped_reviews
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_ssh_key_given"
down_revision = "0009_grouped_reviews"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Orders copied before are not known: left null, and not refused for it.
    with op.batch_alter_table("payable_orders") as batch_op:
        batch_op.add_column(sa.Column("ssh_key_given", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("payable_orders") as batch_op:
        batch_op.drop_column("ssh_key_given")
