from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentCaller, Rpc
from kernodeck_gateway.schemas import OrderConfiguration, present_order

router = APIRouter(prefix="/api/v1/orders", tags=["orders"])


@router.post("", status_code=201)
async def create_order(body: OrderConfiguration, caller: CurrentCaller, rpc: Rpc) -> dict:
    order = await rpc.call(
        "orders", "create_order", caller.account_id, body.model, body.duration_days, body.lots, body.preparation
    )
    return present_order(order)


@router.get("")
async def list_orders(caller: CurrentCaller, rpc: Rpc) -> list[dict]:
    return [present_order(o) for o in await rpc.call("orders", "list_orders", caller.account_id)]


@router.get("/{order_id}")
async def get_order(order_id: str, caller: CurrentCaller, rpc: Rpc) -> dict:
    return present_order(await rpc.call("orders", "get_order", caller.account_id, order_id))


@router.post("/{order_id}/cancel")
async def cancel_order(order_id: str, caller: CurrentCaller, rpc: Rpc) -> dict:
    return present_order(await rpc.call("orders", "cancel_order", caller.account_id, order_id))
