"""The bus events an order's changes produce."""

from datetime import timedelta

from kernodeck_contracts.events import OrderCreated, OrderStatusChanged
from kernodeck_orders.domain import Order, OrderStatus


def order_created(order: Order, unpaid_ttl: timedelta) -> OrderCreated:
    summary = order.summary
    return OrderCreated(
        order_id=order.id,
        account_id=order.account_id,
        model_id=summary.model,
        duration_days=summary.duration_days,
        lots=summary.lots,
        total_gpus=summary.total_gpus,
        preparation=summary.preparation,
        total_usd_cents=summary.total_usd_cents,
        ssh_public_key=order.ssh_public_key,
        preparation_note=order.preparation_note,
        expires_at=order.created_at + unpaid_ttl,
        occurred_at=order.created_at,
    )


def status_changed(order: Order, previous: OrderStatus, reason: str) -> OrderStatusChanged:
    return OrderStatusChanged(
        order_id=order.id,
        account_id=order.account_id,
        status=order.status.value,
        previous_status=previous.value,
        reason=reason,
        occurred_at=order.updated_at,
    )
