"""Support requests: customers open them about their orders and read the answers; operators answer them,
confirm or refuse extensions, and see the order's payments and transfers beside a request."""

import asyncio
from typing import Literal

from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentCaller, CurrentOperator, Rpc
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.pages import Limit
from kernodeck_gateway.responses import (
    Extension,
    OperatorSupportRequest,
    OperatorSupportRequestPage,
    SupportRequest,
    SupportRequestPage,
    SupportRequestWithOrder,
)
from kernodeck_gateway.schemas import present_order
from kernodeck_gateway.support_schemas import (
    ExtensionConfirmation,
    ExtensionRefusal,
    NewSupportAnswer,
    NewSupportRequest,
    present_extension,
)

router = APIRouter(prefix="/api/v1", tags=["support"])


@router.post("/support-requests", status_code=201, responses=refusals(404, 409))
async def open_request(body: NewSupportRequest, caller: CurrentCaller, rpc: Rpc) -> SupportRequest:
    """Text that looks like a secret (a key, token, password, Authorization header) is refused with 422
    `secret_in_request`, naming the field, and nothing is stored."""
    return await rpc.call(
        "support", "open_request", caller.account_id, body.order_id, body.kind, body.message, body.details()
    )


@router.get("/support-requests")
async def list_requests(
    caller: CurrentCaller, rpc: Rpc, limit: Limit = None, cursor: str | None = None
) -> SupportRequestPage:
    """The caller's requests with their answers, newest first."""
    return await rpc.call("support", "list_requests", caller.account_id, limit, cursor)


@router.get("/admin/support-requests", tags=["operations"])
async def support_queue(
    operator: CurrentOperator,
    rpc: Rpc,
    status: Literal["open", "answered"] = "open",
    limit: Limit = None,
    cursor: str | None = None,
) -> OperatorSupportRequestPage:
    """Requests in `status` (open by default), oldest first."""
    return await rpc.call("support", "list_queue", status, limit, cursor, operator=operator.account_id)


@router.get("/admin/support-requests/{request_id}", tags=["operations"], responses=refusals(404))
async def support_request(request_id: str, operator: CurrentOperator, rpc: Rpc) -> SupportRequestWithOrder:
    """A request with its answers, and its order with the order's payments and their transfers (what a
    customer who fears paying twice asks about)."""
    request = await rpc.call("support", "get_request", request_id, operator=operator.account_id)
    account_id, order_id = request["account_id"], request["order_id"]
    order, payments = await asyncio.gather(
        rpc.call("orders", "get_order", account_id, order_id),
        rpc.call("payments", "list_order_payments", account_id, order_id),
    )
    return {**request, "order": present_order(order, payments)}


@router.post("/admin/support-requests/{request_id}/answers", tags=["operations"], responses=refusals(404))
async def answer_request(
    request_id: str, body: NewSupportAnswer, operator: CurrentOperator, rpc: Rpc
) -> OperatorSupportRequest:
    return await rpc.call(
        "support", "answer_request", operator.account_id, request_id, body.text, operator=operator.account_id
    )


@router.post("/admin/support-requests/{request_id}/confirm", tags=["operations"], responses=refusals(404, 409))
async def confirm_extension(
    request_id: str, body: ExtensionConfirmation, operator: CurrentOperator, rpc: Rpc
) -> Extension:
    """Confirm an extension request: priced from the catalog, then payable by the customer on the order."""
    extension = await rpc.call(
        "support", "confirm_extension", operator.account_id, request_id, body.note, operator=operator.account_id
    )
    return present_extension(extension, payments=[])  # nothing can have paid it yet


@router.post("/admin/support-requests/{request_id}/refuse", tags=["operations"], responses=refusals(404, 409))
async def refuse_extension(
    request_id: str, body: ExtensionRefusal, operator: CurrentOperator, rpc: Rpc
) -> OperatorSupportRequest:
    return await rpc.call(
        "support", "refuse_extension", operator.account_id, request_id, body.reason, operator=operator.account_id
    )
