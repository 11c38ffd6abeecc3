"""Bus events: one pydantic model per (source service, event type).

Every event carries `event_id` (consumers deduplicate on it), `occurred_at`
and a schema `version`. Amounts are integers (USD cents).
"""

from datetime import UTC, datetime
from typing import ClassVar
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field


def _now() -> datetime:
    return datetime.now(UTC)


class Event(BaseModel):
    # Consumers ignore fields they do not know, so producers can add fields
    # without a coordinated deploy; removing or changing one bumps `version`.
    model_config = ConfigDict(extra="ignore", frozen=True)

    source: ClassVar[str]
    type: ClassVar[str]
    version: ClassVar[int] = 1

    event_id: str = Field(default_factory=lambda: uuid4().hex)
    occurred_at: datetime = Field(default_factory=_now)

    def to_message(self) -> dict:
        return {"version": self.version, **self.model_dump(mode="json")}

    @classmethod
    def from_message(cls, payload: dict) -> "Event":
        return cls.model_validate(payload)


class OrderCreated(Event):
    source = "orders"
    type = "order_created"

    order_id: str
    account_id: str
    model_id: str
    duration_days: int
    lots: int
    total_gpus: int
    preparation: str
    total_usd_cents: int


class OrderStatusChanged(Event):
    source = "orders"
    type = "order_status_changed"

    order_id: str
    account_id: str
    status: str
    previous_status: str
    reason: str = ""


class CapacityChanged(Event):
    """Provisioning's count of lots it can still deliver for one model."""

    source = "provisioning"
    type = "capacity_changed"

    model_id: str
    available_lots: int


ALL_EVENTS: tuple[type[Event], ...] = (OrderCreated, OrderStatusChanged, CapacityChanged)
