"""processed_events by processed_at: the hourly prune of old rows reads the index, not the whole table

Revision ID: 0003_processed_at_index
Revises: 0002_unsupported_preparations
"""

revision = "0003_processed_at_index"
down_revision = "0002_unsupported_preparations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Nothing since the kit owns its tables: its first revision (kit_0001_tables) makes processed_events with
    this index; a database made before that got it here."""


def downgrade() -> None:
    """Nothing: the kit's revision drops the index with its table."""
