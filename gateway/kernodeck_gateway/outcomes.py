"""What each payment brought to the balance besides paying what it was for, and the checks it went to: asked of
payments once for a whole page of payments, and put on each as `outcome` for `present_payment`."""

from collections.abc import Iterable

from kernodeck_contracts.clients import PaymentsClient


async def attach_outcomes(payments: PaymentsClient, account_id: str, *groups: Iterable[dict]) -> None:
    listed = [payment for group in groups for payment in group]
    if not listed:
        return
    found = await payments.list_payment_outcomes(account_id=account_id, payment_ids=[p["id"] for p in listed])
    for payment in listed:
        payment["outcome"] = found[payment["id"]]
