"""Operator routes: the payments review queue, the payment methods switch, the GPU nodes."""

from typing import Literal

from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentOperator, Rpc
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
    rpc: Rpc,
    status: Literal["open", "resolved"] | None = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> Page[Review]:
    """The review queue (in `status`, or all), newest first, a page at a time."""
    return present_page(
        await rpc.call("payments", "list_reviews", status, limit, cursor, operator=operator.account_id), present_review
    )


@router.post("/reviews/{review_id}/resolve", responses=refusals(404, 409))
async def resolve_review(review_id: str, body: ReviewResolution, operator: CurrentOperator, rpc: Rpc) -> Review:
    review = await rpc.call(
        "payments",
        "resolve_review",
        operator.account_id,
        review_id,
        body.decision,
        body.amount_usd,
        body.note,
        operator=operator.account_id,
    )
    return present_review(review)


@router.put("/payment-methods/{asset}/{network}", responses=refusals(404))
async def switch_method(
    asset: str, network: str, body: MethodSwitch, operator: CurrentOperator, rpc: Rpc
) -> PaymentMethod:
    method = await rpc.call(
        "payments",
        "set_method_enabled",
        operator.account_id,
        asset,
        network,
        body.enabled,
        operator=operator.account_id,
    )
    return present_method(method)


@router.get("/nodes")
async def list_nodes(operator: CurrentOperator, rpc: Rpc) -> list[Node]:
    return await rpc.call("provisioning", "list_nodes", operator=operator.account_id)


@router.post("/nodes", status_code=201, responses=refusals(409))
async def add_node(body: NewNode, operator: CurrentOperator, rpc: Rpc) -> Node:
    """Register a node; its SSH host key is pinned (a node at the same host and port twice: 409 already_exists)."""
    return await rpc.call(
        "provisioning",
        "add_node",
        body.host,
        body.port,
        body.host_key,
        body.model,
        body.gpu_count,
        body.note,
        operator=operator.account_id,
    )


@router.put("/nodes/{node_id}/state", responses=refusals(404, 409))
async def set_node_state(node_id: str, body: NodeStateChange, operator: CurrentOperator, rpc: Rpc) -> Node:
    """Drain, maintain, bring back or retire a node; a node with live rentals is drained, never retired."""
    return await rpc.call(
        "provisioning", "set_node_state", node_id, body.state, body.note, operator=operator.account_id
    )
