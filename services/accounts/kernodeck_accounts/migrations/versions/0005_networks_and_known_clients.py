"""registrations counted per network too; known clients, whose logins go first in the password queue

Revision ID: 0005_networks_and_known_clients
Revises: 0004_processed_at_index
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

import kernodeck_kit.types

revision = "0005_networks_and_known_clients"
down_revision = "0004_processed_at_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Registrations recorded before have no network: they count per client and overall for their last hour.
    with op.batch_alter_table("registrations") as batch_op:
        batch_op.add_column(sa.Column("client_network", sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default=""))
        batch_op.create_index("ix_registrations_network_at", ["client_network", "at"])
    op.create_table(
        "known_clients",
        sa.Column("client_address", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("last_success_at", kernodeck_kit.types.UtcDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("client_address"),
    )
    op.create_index("ix_known_clients_last_success_at", "known_clients", ["last_success_at"])


def downgrade() -> None:
    op.drop_index("ix_known_clients_last_success_at", "known_clients")
    op.drop_table("known_clients")
    with op.batch_alter_table("registrations") as batch_op:
        batch_op.drop_index("ix_registrations_network_at")
        batch_op.drop_column("client_network")
