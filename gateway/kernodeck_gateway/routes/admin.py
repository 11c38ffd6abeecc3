"""Operator routes: the payments review queue and the payment methods switch."""

from typing import Literal

from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentOperator, Rpc
from kernodeck_gateway.schemas import MethodSwitch, ReviewResolution, present_method, present_review

router = APIRouter(prefix="/api/v1/admin", tags=["operations"])


@router.get("/reviews")
async def list_reviews(
    operator: CurrentOperator, rpc: Rpc, status: Literal["open", "resolved"] | None = None
) -> list[dict]:
    return [present_review(r) for r in await rpc.call("payments", "list_reviews", status)]


@router.post("/reviews/{review_id}/resolve")
async def resolve_review(review_id: str, body: ReviewResolution, operator: CurrentOperator, rpc: Rpc) -> dict:
    review = await rpc.call(
        "payments", "resolve_review", operator.account_id, review_id, body.decision, body.amount_usd, body.note
    )
    return present_review(review)


@router.put("/payment-methods/{asset}/{network}")
async def switch_method(asset: str, network: str, body: MethodSwitch, operator: CurrentOperator, rpc: Rpc) -> dict:
    method = await rpc.call("payments", "set_method_enabled", operator.account_id, asset, network, body.enabled)
    return present_method(method)
