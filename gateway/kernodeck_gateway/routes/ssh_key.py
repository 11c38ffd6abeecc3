from fastapi import APIRouter

from kernodeck_gateway.auth import CurrentCaller
from kernodeck_gateway.clients import ProvisioningService
from kernodeck_gateway.responses import AccountSshKey
from kernodeck_gateway.schemas import SshKey

router = APIRouter(prefix="/api/v1/me", tags=["accounts"])


@router.put("/ssh-key")
async def set_ssh_key(body: SshKey, caller: CurrentCaller, provisioning: ProvisioningService) -> AccountSshKey:
    """The key installed on the nodes of orders that were given none (a malformed key: 422)."""
    return await provisioning.set_ssh_key(account_id=caller.account_id, ssh_public_key=body.ssh_public_key)


@router.get("/ssh-key")
async def get_ssh_key(caller: CurrentCaller, provisioning: ProvisioningService) -> AccountSshKey:
    return await provisioning.get_ssh_key(account_id=caller.account_id)
