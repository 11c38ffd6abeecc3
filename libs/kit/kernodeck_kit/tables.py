"""The kit's own tables, present in every service's database."""

from datetime import datetime

from sqlmodel import Column, Field, SQLModel

from kernodeck_kit.types import UtcDateTime, utcnow


class OutboxMessage(SQLModel, table=True):
    __tablename__ = "outbox"

    id: int | None = Field(default=None, primary_key=True)
    event_id: str = Field(max_length=64, unique=True)
    source: str = Field(max_length=64)
    event_type: str = Field(max_length=128)
    payload: str
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False))
    sent_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime(), index=True))
    attempts: int = 0


class ProcessedEvent(SQLModel, table=True):
    """What an idempotent consumer has already applied."""

    __tablename__ = "processed_events"

    consumer: str = Field(max_length=128, primary_key=True)
    event_id: str = Field(max_length=64, primary_key=True)
    # Indexed for the prune of old rows (Store.prune_processed), which would otherwise read the whole table.
    processed_at: datetime = Field(default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False, index=True))
