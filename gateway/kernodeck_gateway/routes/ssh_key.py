from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentCaller, Rpc
from kernodeck_gateway.responses import AccountSshKey
from kernodeck_gateway.schemas import SshKey

router = APIRouter(prefix="/api/v1/me", tags=["accounts"])


@router.put("/ssh-key")
async def set_ssh_key(body: SshKey, caller: CurrentCaller, rpc: Rpc) -> AccountSshKey:
    """The key installed on the nodes of orders that were given none (a malformed key: 422)."""
    return await rpc.call("provisioning", "set_ssh_key", caller.account_id, body.ssh_public_key)


@router.get("/ssh-key")
async def get_ssh_key(caller: CurrentCaller, rpc: Rpc) -> AccountSshKey:
    return await rpc.call("provisioning", "get_ssh_key", caller.account_id)
