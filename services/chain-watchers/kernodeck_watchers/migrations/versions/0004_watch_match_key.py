"""watched_addresses.match_key: a Tron watch's account id, decoded once when written, not at every load

Revision ID: 0004_watch_match_key
Revises: 0003_processed_at_index
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

from kernodeck_chains.addresses import tron_account_id

revision = "0004_watch_match_key"
down_revision = "0003_processed_at_index"
branch_labels = None
depends_on = None

BATCH = 10_000


def upgrade() -> None:
    with op.batch_alter_table("watched_addresses") as batch:
        batch.add_column(sa.Column("match_key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True))
    # As TronClient.match_key computes it; text that is no Tron address keeps none (the watcher finds none either).
    # Other networks' blocks name addresses as they are watched: their keys stay null.
    connection = op.get_bind()
    watches = sa.table("watched_addresses", sa.column("network"), sa.column("address"), sa.column("match_key"))
    addresses = connection.execute(sa.select(watches.c.address).where(watches.c.network == "tron")).scalars().all()
    update = (
        watches.update()
        .where(watches.c.network == "tron", watches.c.address == sa.bindparam("watched"))
        .values(match_key=sa.bindparam("key"))
    )
    for start in range(0, len(addresses), BATCH):
        chunk = addresses[start : start + BATCH]
        keyed = [{"watched": address, "key": key} for address in chunk if (key := _account_key(address))]
        if keyed:
            connection.execute(update, keyed)


def _account_key(address: str) -> str | None:
    try:
        return tron_account_id(address).hex()
    except ValueError:
        return None


def downgrade() -> None:
    with op.batch_alter_table("watched_addresses") as batch:
        batch.drop_column("match_key")
