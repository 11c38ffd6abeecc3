from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentCaller, Rpc
from kernodeck_gateway.pages import Cursor, Limit, Page, present_page
from kernodeck_gateway.responses import Balance, LedgerEntry
from kernodeck_gateway.schemas import present_balance, present_ledger_entry

router = APIRouter(prefix="/api/v1/me", tags=["balance"])


@router.get("/balance")
async def get_balance(caller: CurrentCaller, rpc: Rpc) -> Balance:
    return present_balance(await rpc.call("payments", "get_balance", caller.account_id))


@router.get("/ledger")
async def list_ledger(caller: CurrentCaller, rpc: Rpc, limit: Limit = None, cursor: Cursor = None) -> Page[LedgerEntry]:
    """The balance's movements, newest first, a page at a time."""
    page = await rpc.call("payments", "list_ledger", caller.account_id, limit, cursor)
    return present_page(page, present_ledger_entry)
