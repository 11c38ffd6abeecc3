"""Solana pool addresses are given once: those an older release gave back to the pool after an intent used them
are retired (owned again by the last intent that showed them), so that no other customer is handed one

Revision ID: 0011_retire_solana_addresses
Revises: 0010_ssh_key_given
"""

from alembic import op

revision = "0011_retire_solana_addresses"
down_revision = "0010_ssh_key_given"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        UPDATE solana_pool SET intent_id = (
            SELECT i.id FROM payment_intents i
            WHERE i.network = 'solana' AND i.address = solana_pool.address
            ORDER BY i.created_at DESC LIMIT 1
        )
        WHERE intent_id IS NULL AND EXISTS (
            SELECT 1 FROM payment_intents i WHERE i.network = 'solana' AND i.address = solana_pool.address
        )
        """
    )


def downgrade() -> None:
    """Nothing to undo: the addresses stay retired."""
