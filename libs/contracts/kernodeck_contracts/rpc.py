"""RPC results that another service reads, typed like the events: the caller validates what it gets, and a
test double of the answering service is built from the same model.

Extra fields are ignored, so the answering service can add fields without a coordinated deploy.
"""

from pydantic import BaseModel, ConfigDict


class RpcResult(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class OrderSummary(RpcResult):
    """What an order is for, priced: the catalog's quote as it stood when the order was recorded."""

    model: str
    model_name: str
    backend: str
    duration_days: int
    lots: int
    gpus_per_lot: int
    total_gpus: int
    preparation: str
    lot_price_usd_cents: int
    total_usd_cents: int


class Quote(OrderSummary):
    """The catalog's answer to `quote`: the summary an order would have, and whether capacity covers it."""

    available: bool


class ListedModel(RpcResult):
    """A GPU model as the catalog lists it; `lot_prices_cents` by duration in days (a string, as JSON keys are)."""

    id: str
    name: str
    vendor: str
    backend: str
    memory_gb_per_gpu: int
    gpus_per_lot: int
    lot_prices_cents: dict[str, int]
    available_lots: int
    held_lots: int
    unsupported_preparations: list[str] = []


class ListedPreparation(RpcResult):
    id: str
    name: str
    description: str


class LotBounds(RpcResult):
    min: int
    max: int


class CatalogListing(RpcResult):
    """The catalog's answer to `list_catalog`: what can be ordered, for how long, and how much of it."""

    models: list[ListedModel]
    durations_days: list[int]
    lots: LotBounds
    preparations: list[ListedPreparation]


class OrderToPay(RpcResult):
    """orders' answer to `get_payable_order`: the order's `order_created` payload as orders would publish it, and
    its status now (for payments, asked before that event arrived)."""

    created: dict
    status: str


class Hold(RpcResult):
    """provisioning's answer to `hold_capacity`: until when the order's GPUs are held, and whether this call
    took them (False: an earlier hold, extended)."""

    order_id: str
    held_until: str
    new: bool


class WatchedPage(RpcResult):
    """payments' answer to `watched_addresses`: a page of addresses (as the watchers read them), and the `after`
    of the next page, None after the last."""

    addresses: list[dict]
    next: str | None
