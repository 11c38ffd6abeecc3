import asyncio
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends

from kernodeck_contracts.clients import PaymentsClient, ProvisioningClient, SupportClient
from kernodeck_contracts.statuses import OrderStatus
from kernodeck_gateway.auth import CurrentCaller
from kernodeck_gateway.clients import OrdersService, PaymentsService, ProvisioningService, SupportService
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.outcomes import attach_outcomes
from kernodeck_gateway.pages import Cursor, Limit, Page
from kernodeck_gateway.responses import Order, OrderPayment
from kernodeck_gateway.schemas import NewOrder, PaymentMethodChoice, present_order, present_payment
from kernodeck_gateway.support_schemas import present_extension

router = APIRouter(prefix="/api/v1/orders", tags=["orders"])

PAID_POLL_INTERVAL_S = 0.02
PAID_POLL_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class OrderSources:
    """The services an order is shown with: its payments, its access, its extensions."""

    payments: PaymentsClient
    provisioning: ProvisioningClient
    support: SupportClient


async def order_sources(
    payments: PaymentsService, provisioning: ProvisioningService, support: SupportService
) -> OrderSources:
    return OrderSources(payments, provisioning, support)


Sources = Annotated[OrderSources, Depends(order_sources)]


# An order is shown with its payments or not at all: when payments does not
# answer, the call raises and the customer gets a 503. An order shown
# "awaiting_payment" without the transfer already seen would invite the
# customer to pay a second time.
async def with_payments(sources: OrderSources, account_id: str, order: dict) -> dict:
    paid, access, extensions = await asyncio.gather(
        sources.payments.list_order_payments(account_id=account_id, order_id=order["id"]),
        access_of(sources, account_id, [order]),
        extensions_of(sources, account_id, [order["id"]]),
    )
    await attach_outcomes(sources.payments, account_id, paid)
    return present_order(order, paid, access.get(order["id"]), extensions[order["id"]])


async def access_of(sources: OrderSources, account_id: str, orders: list[dict]) -> dict[str, dict]:
    """The access of the caller's own ready orders, from provisioning (which shows it only while the rental is live)."""
    ready = [order["id"] for order in orders if order["status"] == OrderStatus.READY]
    return await sources.provisioning.get_access(account_id=account_id, order_ids=ready) if ready else {}


async def extensions_of(sources: OrderSources, account_id: str, order_ids: list[str]) -> dict[str, list[dict]]:
    """The orders' confirmed extensions (from support), each with its payments, by order id."""
    found = await sources.support.list_extensions(account_id=account_id, order_ids=order_ids)
    ids = [extension["id"] for extensions in found.values() for extension in extensions]
    paid = await sources.payments.list_payments_for_orders(account_id=account_id, order_ids=ids) if ids else {}
    await attach_outcomes(sources.payments, account_id, *paid.values())
    return {
        order_id: [present_extension(e, paid.get(e["id"], [])) for e in extensions]
        for order_id, extensions in found.items()
    }


@router.post("", status_code=201, responses=refusals(409, 429))
async def create_order(body: NewOrder, caller: CurrentCaller, orders: OrdersService) -> Order:
    """A new order at today's price: 409 `out_of_capacity` when its lots are not free, 409 `unpaid_orders_limit`
    when the account has as many orders awaiting payment as it may, 429 `too_many_requests` (Retry-After) past the
    account's new orders per hour."""
    order = await orders.create_order(
        account_id=caller.account_id,
        model=body.model,
        duration_days=body.duration_days,
        lots=body.lots,
        preparation=body.preparation,
        ssh_public_key=body.ssh_public_key,
        preparation_note=body.preparation_note,
    )
    return present_order(order, payments=[])  # nothing can have paid an order created just now


@router.get("")
async def list_orders(
    caller: CurrentCaller, sources: Sources, orders: OrdersService, limit: Limit = None, cursor: Cursor = None
) -> Page[Order]:
    """The caller's orders, newest first, a page at a time."""
    page = await orders.list_orders(account_id=caller.account_id, limit=limit, cursor=cursor)
    listed = page["items"]
    if not listed:
        return page
    ids = [order["id"] for order in listed]
    paid, access, extensions = await asyncio.gather(
        sources.payments.list_payments_for_orders(account_id=caller.account_id, order_ids=ids),
        access_of(sources, caller.account_id, listed),
        extensions_of(sources, caller.account_id, ids),
    )
    await attach_outcomes(sources.payments, caller.account_id, *paid.values())
    items = [
        present_order(order, paid[order["id"]], access.get(order["id"]), extensions[order["id"]]) for order in listed
    ]
    return {"items": items, "next_cursor": page["next_cursor"]}


@router.get("/{order_id}", responses=refusals(404))
async def get_order(order_id: str, caller: CurrentCaller, sources: Sources, orders: OrdersService) -> Order:
    order = await orders.get_order(account_id=caller.account_id, order_id=order_id)
    return await with_payments(sources, caller.account_id, order)


@router.post("/{order_id}/cancel", responses=refusals(404, 409))
async def cancel_order(order_id: str, caller: CurrentCaller, orders: OrdersService, payments: PaymentsService) -> Order:
    # Payments first: if it is down, the 503 comes before anything is cancelled.
    paid = await payments.list_order_payments(account_id=caller.account_id, order_id=order_id)
    await attach_outcomes(payments, caller.account_id, paid)
    cancelled = await orders.cancel_order(account_id=caller.account_id, order_id=order_id)
    return present_order(cancelled, paid)  # no access


@router.post("/{order_id}/payments", status_code=201, responses=refusals(404, 409, 422, 429))
async def create_order_payment(
    order_id: str, body: PaymentMethodChoice, caller: CurrentCaller, payments: PaymentsService
) -> OrderPayment:
    """A crypto payment intent for the order, which holds its GPUs until the intent's deadline: 409 when it is not
    awaiting payment or its GPUs are not free (`out_of_capacity`, also when accounts yet to pay a first order hold
    their whole share of the model), 409 `hold_limit_reached` when the account's unpaid orders hold as many GPUs as
    it may, 429 `holds_cooling_off` (Retry-After) when too many of its payments for orders expired unpaid lately,
    429 `too_many_requests` (Retry-After) when it was given as many addresses on the network lately as it may
    while nothing reached them, 422 `ssh_key_required` when neither the order nor the account has an SSH key (nothing is taken for a machine
    that cannot be handed over; the order stays as it is)."""
    payment = await payments.create_order_payment(
        account_id=caller.account_id, order_id=order_id, asset=body.asset, network=body.network
    )
    return present_payment(payment)


@router.post("/{order_id}/pay-with-balance", responses=refusals(404, 409, 422))
async def pay_with_balance(
    order_id: str, caller: CurrentCaller, sources: Sources, orders: OrdersService, payments: PaymentsService
) -> Order:
    """Debit the order's total from the balance: 409 `insufficient_balance` when it is short, 422
    `ssh_key_required` as for a crypto payment."""
    await payments.pay_with_balance(account_id=caller.account_id, order_id=order_id)
    # The debit is done; orders learns of it from an event. Wait briefly for
    # the order to turn paid, and answer with it as it is either way.
    clock = asyncio.get_running_loop()
    deadline = clock.time() + PAID_POLL_TIMEOUT_S
    while True:
        order = await orders.get_order(account_id=caller.account_id, order_id=order_id)
        if order["status"] != OrderStatus.AWAITING_PAYMENT or clock.time() >= deadline:
            return await with_payments(sources, caller.account_id, order)
        await asyncio.sleep(PAID_POLL_INTERVAL_S)
