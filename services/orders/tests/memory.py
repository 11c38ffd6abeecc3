"""The orders' unit of work on plain objects: their use cases run here without a database.

Reads hand out copies and a status change is kept only when saved, as with the database.
"""

from copy import deepcopy
from dataclasses import dataclass, field, replace
from datetime import datetime

from kernodeck_kit.paging import Page
from kernodeck_kit.units import MemoryUnits
from kernodeck_orders.domain import Order, OrderStatus, PaymentInFlight, StaleOrder, TimelineEntry, order_key


@dataclass
class OrderTables:
    orders: dict[str, Order] = field(default_factory=dict)
    payments: dict[str, PaymentInFlight] = field(default_factory=dict)


class MemoryOrders:
    def __init__(self, tables: OrderTables, emit):
        self.tables = tables
        self.emit = emit

    def add(self, order: Order) -> None:
        self.tables.orders[order.id] = deepcopy(order)

    def get(self, order_id: str) -> Order | None:
        return deepcopy(self.tables.orders.get(order_id))

    def list_for(self, account_id: str, page: Page) -> list[Order]:
        mine = [deepcopy(o) for o in self.tables.orders.values() if o.account_id == account_id]
        return page.take(mine, order_key)

    def save_transition(self, order: Order, entry: TimelineEntry) -> None:
        if self.tables.orders[order.id].version != order.version:
            raise StaleOrder(order.id)
        order.version += 1
        self.tables.orders[order.id] = deepcopy(order)

    def save_rental(self, order: Order) -> None:
        self.tables.orders[order.id].rental = deepcopy(order.rental)

    def add_note(self, order: Order, entry: TimelineEntry) -> None:
        self.tables.orders[order.id].timeline.append(entry)

    def unpaid_order_ids(self, created_before: datetime, now: datetime, limit: int) -> list[str]:
        unpaid = [
            o
            for o in self.tables.orders.values()
            if o.status == OrderStatus.AWAITING_PAYMENT
            and o.created_at <= created_before
            and not self.payment_in_flight(o.id, now)
        ]
        return [o.id for o in sorted(unpaid, key=lambda o: o.created_at)][:limit]

    def track_payment(self, payment: PaymentInFlight) -> None:
        known = self.tables.payments.get(payment.payment_id)
        if known is not None and payment.at < known.at:
            payment = replace(known, expires_at=payment.expires_at or known.expires_at)
        elif known is not None:
            payment = replace(payment, expires_at=payment.expires_at or known.expires_at)
        self.tables.payments[payment.payment_id] = payment

    def payment_in_flight(self, order_id: str, now: datetime) -> bool:
        return any(p.order_id == order_id and p.can_still_arrive(now) for p in self.tables.payments.values())


def memory_units() -> MemoryUnits:
    return MemoryUnits("orders", OrderTables(), MemoryOrders)
