"""Support requests: customers open them about an order, a top-up or their account and read the answers; operators
answer them, confirm or refuse extensions (extra days, or a change of configuration as a new order), and see the
order's or the top-up's payments and transfers beside a request."""

import asyncio
from typing import Literal

from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentCaller, CurrentOperator
from kernodeck_gateway.clients import OrdersService, PaymentsService, SupportService
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.outcomes import attach_outcomes
from kernodeck_gateway.pages import Limit
from kernodeck_gateway.responses import (
    Extension,
    OperatorSupportRequest,
    OperatorSupportRequestPage,
    SupportRequest,
    SupportRequestPage,
    SupportRequestWithOrder,
)
from kernodeck_gateway.schemas import present_order, present_topup
from kernodeck_gateway.support_schemas import (
    ConfigurationConfirmation,
    ExtensionConfirmation,
    ExtensionRefusal,
    NewSupportAnswer,
    NewSupportRequest,
    present_extension,
)

router = APIRouter(prefix="/api/v1", tags=["support"])


@router.post("/support-requests", status_code=201, responses=refusals(404, 409))
async def open_request(body: NewSupportRequest, caller: CurrentCaller, support: SupportService) -> SupportRequest:
    """About an order (`order_id`), a top-up (`topup_id`) or, with neither, the account; 404 for another's order
    or top-up. Text that looks like a secret (a key, token, password, Authorization header) is refused with 422
    `secret_in_request`, naming the field, and nothing is stored."""
    return await support.open_request(
        account_id=caller.account_id,
        order_id=body.order_id,
        kind=body.kind,
        message=body.message,
        fields=body.details(),
        topup_id=body.topup_id,
    )


@router.get("/support-requests")
async def list_requests(
    caller: CurrentCaller, support: SupportService, limit: Limit = None, cursor: str | None = None
) -> SupportRequestPage:
    """The caller's requests with their answers, newest first."""
    return await support.list_requests(account_id=caller.account_id, limit=limit, cursor=cursor)


@router.get("/admin/support-requests", tags=["operations"])
async def support_queue(
    operator: CurrentOperator,
    support: SupportService,
    status: Literal["open", "answered"] = "open",
    limit: Limit = None,
    cursor: str | None = None,
) -> OperatorSupportRequestPage:
    """Requests in `status` (open by default), oldest first."""
    return await support.using(operator=operator.account_id).list_queue(status=status, limit=limit, cursor=cursor)


@router.get("/admin/support-requests/{request_id}", tags=["operations"], responses=refusals(404))
async def support_request(
    request_id: str,
    operator: CurrentOperator,
    support: SupportService,
    orders: OrdersService,
    payments: PaymentsService,
) -> SupportRequestWithOrder:
    """A request with its answers, and its order with the order's payments and their transfers, or its top-up
    with its payment (what a customer who fears paying twice asks about)."""
    request = await support.using(operator=operator.account_id).get_request(request_id=request_id)
    account_id, order_id, topup_id = request["account_id"], request["order_id"], request["topup_id"]
    order = topup = None
    if order_id is not None:
        found, paid = await asyncio.gather(
            orders.get_order(account_id=account_id, order_id=order_id),
            payments.list_order_payments(account_id=account_id, order_id=order_id),
        )
        await attach_outcomes(payments, account_id, paid)
        order = present_order(found, paid)
    if topup_id is not None:
        found = await payments.get_topup(account_id=account_id, topup_id=topup_id)
        await attach_outcomes(payments, account_id, [found["payment"]])
        topup = present_topup(found)
    return {**request, "order": order, "topup": topup}


@router.post("/admin/support-requests/{request_id}/answers", tags=["operations"], responses=refusals(404))
async def answer_request(
    request_id: str, body: NewSupportAnswer, operator: CurrentOperator, support: SupportService
) -> OperatorSupportRequest:
    return await support.using(operator=operator.account_id).answer_request(
        operator_id=operator.account_id, request_id=request_id, text=body.text
    )


@router.post("/admin/support-requests/{request_id}/confirm", tags=["operations"], responses=refusals(404, 409))
async def confirm_extension(
    request_id: str, body: ExtensionConfirmation, operator: CurrentOperator, support: SupportService
) -> Extension:
    """Confirm an extension request: priced from the catalog, then payable by the customer on the order."""
    extension = await support.using(operator=operator.account_id).confirm_extension(
        operator_id=operator.account_id, request_id=request_id, note=body.note
    )
    return present_extension(extension, payments=[])  # nothing can have paid it yet


@router.post(
    "/admin/support-requests/{request_id}/confirm-configuration", tags=["operations"], responses=refusals(404, 409)
)
async def confirm_configuration(
    request_id: str, body: ConfigurationConfirmation, operator: CurrentOperator, support: SupportService
) -> OperatorSupportRequest:
    """Confirm an extension request's change of configuration: a running machine is not rebuilt, so the change is
    a new order of `model`, `lots` and `duration_days` for the customer, priced by the catalog, delivered with the
    order's SSH key and preparation; the answer names it, and the customer pays it on its page. 409 when the order
    is over, the request past its due date or decided, or the catalog cannot deliver the configuration now."""
    return await support.using(operator=operator.account_id).confirm_configuration(
        operator_id=operator.account_id,
        request_id=request_id,
        model=body.model,
        lots=body.lots,
        duration_days=body.duration_days,
        note=body.note,
    )


@router.post("/admin/support-requests/{request_id}/refuse", tags=["operations"], responses=refusals(404, 409))
async def refuse_extension(
    request_id: str, body: ExtensionRefusal, operator: CurrentOperator, support: SupportService
) -> OperatorSupportRequest:
    return await support.using(operator=operator.account_id).refuse_extension(
        operator_id=operator.account_id, request_id=request_id, reason=body.reason
    )
