"""What each payment brought to the balance besides paying what it was for, and the checks it went to: asked of
payments once for a whole page of payments, and put on each as `outcome` for `present_payment`."""

from collections.abc import Iterable

from kernodeck_gateway.rpc import RpcClient


async def attach_outcomes(rpc: RpcClient, account_id: str, *groups: Iterable[dict]) -> None:
    payments = [payment for group in groups for payment in group]
    if not payments:
        return
    found = await rpc.call("payments", "list_payment_outcomes", account_id, [p["id"] for p in payments])
    for payment in payments:
        payment["outcome"] = found[payment["id"]]
