"""Capacity: GPUs held before payment instructions, released when lapsed, and what the catalog is told."""

from dataclasses import replace
from datetime import datetime

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import CapacityChanged, PaymentStatusChanged
from kernodeck_contracts.statuses import PaymentStatus
from kernodeck_kit.units import Units
from kernodeck_provisioning.domain import (
    GpuModel,
    HeldNow,
    HoldLimits,
    NodeLoad,
    Rental,
    RentalStatus,
    available_lots,
    check_gpus,
    check_hold_limits,
    model_gpus,
    move_rental,
    place,
    ssh_key_required,
)
from kernodeck_provisioning.use_cases.unit import BATCH, ProvisioningUnit, locked_rental

# A payment in these statuses has a transfer on its way: its order's hold waits for it past the deadline.
PAYMENT_IN_FLIGHT = frozenset(
    {PaymentStatus.SEEN, PaymentStatus.CONFIRMING, PaymentStatus.SETTLED, PaymentStatus.OVERPAID}
)


def loads_of(unit: ProvisioningUnit, model_id: str) -> list[NodeLoad]:
    nodes = unit.nodes_of_model(model_id)
    claimed = unit.claimed_on([n.id for n in nodes])
    return [NodeLoad(n, claimed[n.id]) for n in nodes]


def announce_capacity(
    unit: ProvisioningUnit,
    model_id: str,
    force: bool = False,
    loads: list[NodeLoad] | None = None,
    model: GpuModel | None = None,
) -> int:
    """Tell the catalog the model's free lots and the lots unpaid holds set aside when they changed (or always,
    with `force`); `loads` and `model`, when the caller has them current (read under the model's lock), spare
    reading them again."""
    model = model or unit.get_model(model_id)
    lots = available_lots(loads if loads is not None else loads_of(unit, model_id), model.gpus_per_lot)
    held = unit.held_gpus(model_id) // model.gpus_per_lot
    if force or (lots, held) != (model.published_lots, model.published_held_lots):
        unit.emit(CapacityChanged(model_id=model_id, available_lots=lots, held_lots=held))
        unit.save_model(replace(model, published_lots=lots, published_held_lots=held))
    return lots


def sync_models(units: Units[ProvisioningUnit], catalog_models: list[dict]) -> None:
    """Copy the catalog's models (backend, GPUs per lot); each gets its capacity announced, 0 without a node."""
    with units.transaction() as unit:
        for entry in catalog_models:
            model = unit.get_model(entry["id"], lock=True)
            fresh = GpuModel(entry["id"], entry["backend"], entry["gpus_per_lot"])
            if model is None or (model.backend, model.gpus_per_lot) != (fresh.backend, fresh.gpus_per_lot):
                unit.save_model(model_with(fresh, model))
        for model in unit.list_models():
            announce_capacity(unit, model.id, force=True)


def hold(
    units: Units[ProvisioningUnit],
    order_id: str,
    account_id: str,
    model_id: str,
    gpus: int,
    until: datetime,
    now: datetime,
    account_key_needed: bool = False,
    limits: HoldLimits | None = None,
) -> dict:
    """Set the order's GPUs aside until `until`; idempotent per order (a later deadline extends it). With
    `account_key_needed` (the order has no SSH key of its own), refused while the account has none. A new hold
    is weighed against `limits` (None for a hold paid in the same call: a debit of the balance)."""
    with units.transaction() as unit:
        if account_key_needed and unit.account_key(account_id) is None:
            raise ssh_key_required()
        model = unit.get_model(model_id, lock=True)
        if model is None:
            raise ServiceError(ErrorCode.OUT_OF_CAPACITY, f"no {model_id} GPU is in service right now")
        check_gpus(gpus, model.gpus_per_lot)
        if until <= now:
            raise ServiceError.field("until", "a hold must end in the future")
        rental = unit.get_rental(order_id)
        if rental is not None and rental.account_id != account_id:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
        if rental is not None and rental.status == RentalStatus.HELD:
            rental.held_until = max(rental.held_until, until)
            unit.save_rental(rental)
            return hold_view(rental, new=False)
        if rental is not None and rental.status != RentalStatus.RELEASED:
            raise ServiceError(ErrorCode.INVALID_STATE, f"the order's GPUs are {rental.status} already")
        order = unit.get_order(order_id)
        if order is not None and order.cancelled:
            raise ServiceError(ErrorCode.INVALID_STATE, "the order is cancelled")
        release_lapsed(unit, model_id, now)
        loads = loads_of(unit, model_id)
        if limits is not None:
            check_hold_limits(limits, held_now(unit, account_id, model_id, loads, now), gpus)
        placement = place(loads, gpus)
        if placement is None:
            raise ServiceError(
                ErrorCode.OUT_OF_CAPACITY, f"not enough {model_id} GPUs are free on one node for this order right now"
            )
        if rental is None:
            rental = Rental(order_id, account_id, model_id, gpus, RentalStatus.HELD)
        else:
            move_rental(rental, RentalStatus.HELD)
            rental.gpus = gpus
        rental.node_id, rental.gpu_indices, rental.held_until = placement.node.id, placement.gpu_indices, until
        rental.payments_in_flight = frozenset()
        unit.save_rental(rental)
        next(load for load in loads if load.node.id == placement.node.id).claimed.update(placement.gpu_indices)
        announce_capacity(unit, model_id, loads=loads, model=model)
        return hold_view(rental, new=True)


def held_now(unit: ProvisioningUnit, account_id: str, model_id: str, loads: list[NodeLoad], now: datetime) -> HeldNow:
    """What the account and the newcomers hold unpaid now; the account's holds wait for each other from here."""
    unit.lock_account(account_id)
    newcomer = not unit.has_paid(account_id)
    return HeldNow(
        by_account=unit.unpaid_held_by(account_id, now),
        newcomer=newcomer,
        by_newcomers=unit.unpaid_held_by_newcomers(model_id, now) if newcomer else 0,
        model_gpus=model_gpus(loads),
    )


def model_with(fresh: GpuModel, known: GpuModel | None) -> GpuModel:
    """The catalog's copy of a model, keeping what was last announced of it."""
    if known is None:
        return fresh
    return replace(fresh, published_lots=known.published_lots, published_held_lots=known.published_held_lots)


def hold_view(rental: Rental, new: bool) -> dict:
    return {"order_id": rental.order_id, "held_until": rental.held_until.isoformat(), "new": new}


def release(units: Units[ProvisioningUnit], order_id: str, reason: str) -> bool:
    """Give back a hold (never an allocation); False when there is none."""
    with units.transaction() as unit:
        return release_hold(unit, order_id, reason)


def release_hold(unit: ProvisioningUnit, order_id: str, reason: str) -> bool:
    rental = locked_rental(unit, order_id)
    if rental is None or rental.status != RentalStatus.HELD:
        return False
    move_rental(rental, RentalStatus.RELEASED, reason)
    unit.save_rental(rental)
    announce_capacity(unit, rental.model_id)
    return True


def release_lapsed(unit: ProvisioningUnit, model_id: str | None, now: datetime) -> int:
    """Holds past their deadline with no transfer on its way; the model(s) must be locked by the caller."""
    lapsed = unit.lapsed_holds(model_id, now, BATCH)
    for rental in lapsed:
        move_rental(rental, RentalStatus.RELEASED, "hold_lapsed")
        unit.save_rental(rental)
    return len(lapsed)


def sweep_holds(units: Units[ProvisioningUnit], model_id: str, now: datetime) -> int:
    with units.transaction() as unit:
        unit.get_model(model_id, lock=True)
        released = release_lapsed(unit, model_id, now)
        if released:
            announce_capacity(unit, model_id)
        return released


def payment_status_changed(units: Units[ProvisioningUnit], event: PaymentStatusChanged) -> None:
    """A transfer on its way keeps the order's hold past its deadline; once it is settled or gone, the deadline
    counts."""
    if event.order_id is None or event.purpose != "order":
        return
    with units.consume(event) as unit:
        if unit is None:
            return
        rental = locked_rental(unit, event.order_id)
        if rental is None or rental.status != RentalStatus.HELD:
            return
        if event.status in PAYMENT_IN_FLIGHT:
            rental.payments_in_flight = rental.payments_in_flight | {event.payment_id}
        else:
            rental.payments_in_flight = rental.payments_in_flight - {event.payment_id}
        unit.save_rental(rental)
