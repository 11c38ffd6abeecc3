"""The orders' unit of work on plain objects (kernodeck_kit.memory): their use cases run here without a
database."""

from copy import deepcopy
from dataclasses import dataclass, field, replace
from datetime import datetime

from kernodeck_kit.memory import MemoryUnit
from kernodeck_kit.paging import Page
from kernodeck_kit.units import MemoryUnits
from kernodeck_orders.domain import Order, OrderStatus, PaymentInFlight, StaleOrder, TimelineEntry, order_key


@dataclass
class OrderTables:
    orders: dict[str, Order] = field(default_factory=dict)
    payments: dict[str, PaymentInFlight] = field(default_factory=dict)


class MemoryOrders(MemoryUnit[OrderTables]):
    def add(self, order: Order) -> None:
        self.put(self.tables.orders, order)

    def read_ahead(self, order_ids: list[str]) -> None:
        """Everything is in memory already."""

    def get(self, order_id: str) -> Order | None:
        return self.read(self.tables.orders, order_id)

    def list_for(self, account_id: str, page: Page) -> list[Order]:
        return self.page(self.tables.orders, page, order_key, lambda o: o.account_id == account_id)

    def lock_account(self, account_id: str) -> None:
        pass  # one transaction at a time

    def unpaid_count(self, account_id: str) -> int:
        return len(
            self.where(
                self.tables.orders, lambda o: o.account_id == account_id and o.status == OrderStatus.AWAITING_PAYMENT
            )
        )

    def created_since(self, account_id: str, since: datetime) -> list[datetime]:
        mine = self.where(self.tables.orders, lambda o: o.account_id == account_id and o.created_at > since)
        return sorted(o.created_at for o in mine)

    def save_transition(self, order: Order, entry: TimelineEntry) -> None:
        if self.tables.orders[order.id].version != order.version:
            raise StaleOrder(order.id)
        order.version += 1
        self.put(self.tables.orders, order)

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

    def track_payments(self, payments: list[PaymentInFlight]) -> None:
        for payment in payments:
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
