"""Operator routes: the payments review queue, the payment methods switch, the GPU nodes."""

from typing import Literal

from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentOperator
from kernodeck_gateway.clients import PaymentsService, ProvisioningService
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.pages import Cursor, Limit, Page, present_page
from kernodeck_gateway.responses import Node, PaymentMethod, Review
from kernodeck_gateway.schemas import (
    MethodSwitch,
    NewNode,
    NodeStateChange,
    ReviewResolution,
    present_method,
    present_review,
)

router = APIRouter(prefix="/api/v1/admin", tags=["operations"])


@router.get("/reviews")
async def list_reviews(
    operator: CurrentOperator,
    payments: PaymentsService,
    status: Literal["open", "resolved"] | None = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> Page[Review]:
    """The review queue (in `status`, or all), newest first, a page at a time."""
    page = await payments.using(operator=operator.account_id).list_reviews(status=status, limit=limit, cursor=cursor)
    return present_page(page, present_review)


@router.post("/reviews/{review_id}/resolve", responses=refusals(404, 409))
async def resolve_review(
    review_id: str, body: ReviewResolution, operator: CurrentOperator, payments: PaymentsService
) -> Review:
    review = await payments.using(operator=operator.account_id).resolve_review(
        operator_id=operator.account_id,
        review_id=review_id,
        decision=body.decision,
        amount_usd_cents=body.amount_usd,
        note=body.note,
    )
    return present_review(review)


@router.put("/payment-methods/{asset}/{network}", responses=refusals(404))
async def switch_method(
    asset: str, network: str, body: MethodSwitch, operator: CurrentOperator, payments: PaymentsService
) -> PaymentMethod:
    method = await payments.using(operator=operator.account_id).set_method_enabled(
        operator_id=operator.account_id, asset=asset, network=network, enabled=body.enabled
    )
    return present_method(method)


@router.get("/nodes")
async def list_nodes(operator: CurrentOperator, provisioning: ProvisioningService) -> list[Node]:
    return await provisioning.using(operator=operator.account_id).list_nodes()


@router.post("/nodes", status_code=201, responses=refusals(409))
async def add_node(body: NewNode, operator: CurrentOperator, provisioning: ProvisioningService) -> Node:
    """Register a node; its SSH host key is pinned (a node at the same host and port twice: 409 already_exists)."""
    return await provisioning.using(operator=operator.account_id).add_node(
        host=body.host,
        port=body.port,
        host_key=body.host_key,
        model=body.model,
        gpu_count=body.gpu_count,
        note=body.note,
    )


@router.put("/nodes/{node_id}/state", responses=refusals(404, 409))
async def set_node_state(
    node_id: str, body: NodeStateChange, operator: CurrentOperator, provisioning: ProvisioningService
) -> Node:
    """Drain, maintain, bring back or retire a node; a node with live rentals is drained, never retired."""
    return await provisioning.using(operator=operator.account_id).set_node_state(
        node_id=node_id, state=body.state, note=body.note
    )
