"""Orders as the RPC answers them: JSON-friendly, times in RFC 3339 UTC, money in integer cents."""

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
        "timeline": [{"at": rfc3339(e.at), "kind": e.kind, "detail": e.detail} for e in order.timeline],
        # Provisioning fills these once it reports on the order.
        "rental": None,
        "access": None,
    }
