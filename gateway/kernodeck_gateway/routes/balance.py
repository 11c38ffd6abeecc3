from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentCaller
from kernodeck_gateway.clients import PaymentsService
from kernodeck_gateway.pages import Cursor, Limit, Page, present_page
from kernodeck_gateway.responses import Balance, LedgerEntry
from kernodeck_gateway.schemas import present_balance, present_ledger_entry

router = APIRouter(prefix="/api/v1/me", tags=["balance"])


@router.get("/balance")
async def get_balance(caller: CurrentCaller, payments: PaymentsService) -> Balance:
    return present_balance(await payments.get_balance(account_id=caller.account_id))


@router.get("/ledger")
async def list_ledger(
    caller: CurrentCaller, payments: PaymentsService, limit: Limit = None, cursor: Cursor = None
) -> Page[LedgerEntry]:
    """The balance's movements, newest first, a page at a time."""
    page = await payments.list_ledger(account_id=caller.account_id, limit=limit, cursor=cursor)
    return present_page(page, present_ledger_entry)
