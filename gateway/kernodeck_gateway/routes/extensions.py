"""Paying a confirmed extension, like an order: a crypto intent, or the balance."""

from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentCaller
from kernodeck_gateway.clients import OrdersService, PaymentsService
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.responses import ExtensionPayment, Order
from kernodeck_gateway.routes.orders import Sources, with_payments
from kernodeck_gateway.schemas import PaymentMethodChoice, present_payment

router = APIRouter(prefix="/api/v1/extensions", tags=["orders"])


@router.post("/{extension_id}/payments", status_code=201, responses=refusals(404, 409, 429))
async def create_extension_payment(
    extension_id: str, body: PaymentMethodChoice, caller: CurrentCaller, payments: PaymentsService
) -> ExtensionPayment:
    """A crypto payment intent for the extension's price; 409 once it is paid or past its due date, 429
    `too_many_requests` (Retry-After) when the account was given as many addresses on the network lately as it may
    while nothing reached them."""
    payment = await payments.create_extension_payment(
        account_id=caller.account_id, extension_id=extension_id, asset=body.asset, network=body.network
    )
    return present_payment(payment)


@router.post("/{extension_id}/pay-with-balance", responses=refusals(404, 409))
async def pay_extension_with_balance(
    extension_id: str, caller: CurrentCaller, sources: Sources, orders: OrdersService, payments: PaymentsService
) -> Order:
    """Debit the balance (409 `insufficient_balance` when short) and answer with the extension's order; its end
    moves once provisioning has applied the extension (the timeline says so)."""
    paid = await payments.pay_extension_with_balance(account_id=caller.account_id, extension_id=extension_id)
    order = await orders.get_order(account_id=caller.account_id, order_id=paid["order_id"])
    return await with_payments(sources, caller.account_id, order)
