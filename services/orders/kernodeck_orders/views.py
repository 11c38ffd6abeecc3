"""Orders as the RPC answers them: JSON-friendly, times in RFC 3339 UTC, money in integer cents."""

from dataclasses import asdict

from kernodeck_kit.types import rfc3339
from kernodeck_orders.domain import Order


def order_view(order: Order) -> dict:
    return {
        "id": order.id,
        "account_id": order.account_id,
        "status": order.status.value,
        "summary": order.summary.model_dump(),
        "created_at": rfc3339(order.created_at),
        "updated_at": rfc3339(order.updated_at),
        "timeline": [
            {
                "at": rfc3339(e.at),
                "kind": e.kind,
                "code": e.said.code.value,
                "params": e.said.params,
                "detail": e.detail,
            }
            for e in order.timeline
        ],
        "ssh_public_key": order.ssh_public_key,  # not a secret; the gateway leaves it out of the order it shows
        "preparation_note": order.preparation_note,
        # From provisioning's events; the access itself is provisioning's, fetched by the gateway for the owner.
        "rental": None if order.rental is None else {k: rfc3339(v) for k, v in asdict(order.rental).items()},
        "access": None,
    }
