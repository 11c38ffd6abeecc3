"""address_key: one intent per address whatever its spelling

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 20:30:00.000000
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

# 0001 left its unique constraints unnamed. PostgreSQL named them <table>_<column>_key;
# SQLite keeps no name, so batch mode gives the reflected one the same name to drop it by.
NAMING = {"uq": "%(table_name)s_%(column_0_name)s_key"}


def upgrade() -> None:
    op.add_column('payment_intents', sa.Column('address_key', sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True))
    # As domain.intents.address_key spells it: Ethereum hex is case-insensitive.
    op.execute(
        "UPDATE payment_intents SET address_key = CASE WHEN network = 'ethereum' THEN lower(address) ELSE address END"
    )
    with op.batch_alter_table('payment_intents', naming_convention=NAMING) as batch_op:
        batch_op.alter_column('address_key', existing_type=sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False)
        batch_op.drop_constraint('payment_intents_address_key', type_='unique')
        batch_op.create_unique_constraint('payment_intents_address_key_key', ['address_key'])


def downgrade() -> None:
    with op.batch_alter_table('payment_intents', naming_convention=NAMING) as batch_op:
        batch_op.drop_constraint('payment_intents_address_key_key', type_='unique')
        batch_op.create_unique_constraint('payment_intents_address_key', ['address'])
        batch_op.drop_column('address_key')
