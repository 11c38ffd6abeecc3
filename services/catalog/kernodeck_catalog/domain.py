"""Catalog rules: what can be ordered and what it costs. No I/O."""

from dataclasses import dataclass
from datetime import datetime

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.rpc import Quote

DURATIONS_DAYS = (3, 7, 30)
MIN_LOTS = 1
MAX_LOTS = 10
BACKENDS = ("cuda", "rocm")


@dataclass(frozen=True)
class GpuModel:
    id: str
    name: str
    vendor: str
    backend: str
    memory_gb_per_gpu: int
    gpus_per_lot: int
    lot_prices_cents: dict[int, int]  # duration in days -> USD cents per lot
    available_lots: int
    # Preparations that cannot run on this model (Blender renders on AMD's RDNA cards, not on Instinct).
    unsupported_preparations: tuple[str, ...] = ()
    held_lots: int = 0  # lots set aside by holds for orders not paid yet (over all nodes)

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise ValueError(f"{self.id}: backend must be one of {BACKENDS}")
        if self.gpus_per_lot < 1 or self.memory_gb_per_gpu < 1 or self.available_lots < 0:
            raise ValueError(f"{self.id}: GPUs per lot and memory must be positive, capacity not negative")
        if sorted(self.lot_prices_cents) != list(DURATIONS_DAYS):
            raise ValueError(f"{self.id}: needs a lot price for exactly {DURATIONS_DAYS} days")
        if any(price <= 0 for price in self.lot_prices_cents.values()):
            raise ValueError(f"{self.id}: lot prices must be positive")


@dataclass(frozen=True)
class Preparation:
    id: str
    name: str
    description: str


@dataclass(frozen=True)
class Catalog:
    models: dict[str, GpuModel]
    preparations: dict[str, Preparation]

    def quote(self, model: str, duration_days: int, lots: int, preparation: str) -> Quote:
        """Price an order; every broken rule is reported at once, per field."""
        errors = []
        gpu = self.models.get(model)
        if gpu is None:
            errors.append({"field": "model", "message": f"unknown model {model!r}"})
        if not _is_int(duration_days) or duration_days not in DURATIONS_DAYS:
            errors.append({"field": "duration_days", "message": "duration must be 3, 7 or 30 days"})
        if not _is_int(lots) or not MIN_LOTS <= lots <= MAX_LOTS:
            errors.append({"field": "lots", "message": f"lots must be from {MIN_LOTS} to {MAX_LOTS}"})
        if preparation not in self.preparations:
            errors.append({"field": "preparation", "message": f"unknown preparation {preparation!r}"})
        elif gpu is not None and preparation in gpu.unsupported_preparations:
            errors.append(
                {"field": "preparation", "message": f"the {preparation} preparation does not run on {gpu.name}"}
            )
        if errors:
            raise ServiceError(ErrorCode.VALIDATION_ERROR, "the order configuration is not valid", errors)

        # The lot price covers every card of the lot (a B200 lot holds two):
        # the total is never multiplied by GPUs.
        lot_price = gpu.lot_prices_cents[duration_days]
        return Quote(
            model=gpu.id,
            model_name=gpu.name,
            backend=gpu.backend,
            duration_days=duration_days,
            lots=lots,
            gpus_per_lot=gpu.gpus_per_lot,
            total_gpus=gpu.gpus_per_lot * lots,
            preparation=preparation,
            lot_price_usd_cents=lot_price,
            total_usd_cents=lot_price * lots,
            available=lots <= gpu.available_lots,
        )


@dataclass(frozen=True)
class Capacity:
    """Provisioning's count of the lots of one model it can still deliver, as of when it counted."""

    available_lots: int
    as_of: datetime | None = None  # None: the operator's initial count, before provisioning's first
    held_lots: int = 0  # lots held for orders not paid yet

    def update(self, available_lots: int, held_lots: int, as_of: datetime) -> "Capacity | None":
        """The counts after provisioning's as of `as_of`; None when they are not newer (counts can arrive out of
        order). A negative count is none."""
        if self.as_of is not None and as_of <= self.as_of:
            return None
        return Capacity(max(0, available_lots), as_of, max(0, held_lots))


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
