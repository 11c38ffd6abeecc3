"""SSH keys set on an account, and what a customer logs into a live rental with."""

from collections.abc import Callable
from datetime import datetime

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.ssh_keys import InvalidSshKey, canonical_ssh_key
from kernodeck_kit.units import Units
from kernodeck_provisioning.domain import Access, is_live
from kernodeck_provisioning.use_cases.unit import ProvisioningUnit


def set_account_key(units: Units[ProvisioningUnit], account_id: str, key: str, now: datetime) -> str:
    try:
        canonical = canonical_ssh_key(key)
    except InvalidSshKey as error:
        raise ServiceError.field("ssh_public_key", str(error)) from None
    with units.transaction() as unit:
        unit.set_account_key(account_id, canonical, now)
    return canonical


def account_key(units: Units[ProvisioningUnit], account_id: str) -> str | None:
    with units.transaction() as unit:
        return unit.account_key(account_id)


def access_of(
    units: Units[ProvisioningUnit], open_secret: Callable[[str], Access], account_id: str, order_ids, now: datetime
) -> dict[str, dict]:
    """{order_id: access} for the caller's own orders whose rental is live; `open_secret` decrypts each access."""
    with units.transaction() as unit:
        return {
            rental.order_id: access_view(open_secret(rental.access_secret), unit.get_order(rental.order_id).preparation)
            for rental in unit.rentals_of(account_id, list(order_ids))
            if is_live(rental, now)
        }


def access_view(access: Access, preparation: str) -> dict:
    notebook = preparation == "notebook"
    return {
        "ssh_host": access.ssh_host,
        "ssh_port": access.ssh_port,
        "ssh_user": access.ssh_user,
        "jupyter_url": access.jupyter_url if notebook else None,
        "jupyter_token": access.jupyter_token if notebook else None,
        "jupyter_tunnel": access.jupyter_tunnel if notebook else None,
    }
