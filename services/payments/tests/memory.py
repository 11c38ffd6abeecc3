"""Payments' units of work on plain objects, for the use cases that run on one (balance.py)."""

from dataclasses import dataclass, field
from datetime import datetime

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.units import MemoryUnits


@dataclass
class BalanceTables:
    available: dict[str, int] = field(default_factory=dict)  # cents by account
    keys: set[str] = field(default_factory=set)  # the ledger's idempotency keys


class MemoryBalance:
    def __init__(self, tables: BalanceTables, emit):
        self.tables = tables
        self.emit = emit

    def debit_for_order(self, account_id: str, cents: int, order_id: str, key: str, at: datetime) -> bool:
        if key in self.tables.keys:
            return False
        if self.tables.available.get(account_id, 0) < cents:
            raise ServiceError(ErrorCode.INSUFFICIENT_BALANCE, "the available balance does not cover the order")
        self.tables.keys.add(key)
        self.tables.available[account_id] -= cents
        return True


def balance_units(**available: int) -> MemoryUnits:
    return MemoryUnits("payments", BalanceTables(dict(available)), MemoryBalance)
