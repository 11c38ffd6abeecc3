from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentCaller
from kernodeck_gateway.clients import PaymentsService
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.outcomes import attach_outcomes
from kernodeck_gateway.pages import Cursor, Limit, Page, present_page
from kernodeck_gateway.responses import Topup
from kernodeck_gateway.schemas import NewTopup, present_topup

router = APIRouter(prefix="/api/v1/topups", tags=["topups"])


@router.post("", status_code=201, responses=refusals(409, 429))
async def create_topup(body: NewTopup, caller: CurrentCaller, payments: PaymentsService) -> Topup:
    """A top-up and its crypto payment intent: 429 `too_many_requests` (Retry-After) when the account was given as
    many addresses on the network lately as it may while nothing reached them."""
    topup = await payments.create_topup(
        account_id=caller.account_id, amount_usd_cents=body.amount_usd, asset=body.asset, network=body.network
    )
    return present_topup(topup)


@router.get("")
async def list_topups(
    caller: CurrentCaller, payments: PaymentsService, limit: Limit = None, cursor: Cursor = None
) -> Page[Topup]:
    """The caller's top-ups, newest first, a page at a time."""
    page = await payments.list_topups(account_id=caller.account_id, limit=limit, cursor=cursor)
    await attach_outcomes(payments, caller.account_id, [topup["payment"] for topup in page["items"]])
    return present_page(page, present_topup)


@router.get("/{topup_id}", responses=refusals(404))
async def get_topup(topup_id: str, caller: CurrentCaller, payments: PaymentsService) -> Topup:
    """One of the caller's top-ups with its payments, so that its instructions can be found again."""
    topup = await payments.get_topup(account_id=caller.account_id, topup_id=topup_id)
    await attach_outcomes(payments, caller.account_id, [topup["payment"]])
    return present_topup(topup)
