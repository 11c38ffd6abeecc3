"""Payments' units of work on plain objects, for the use cases that run on one (balance.py, intake.py)."""

from dataclasses import dataclass, field
from datetime import datetime

from sqlmodel import SQLModel

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.units import MemoryUnits
from kernodeck_payments.availability import MethodBoard


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


@dataclass
class IntakeTables:
    board: MethodBoard  # what the methods have right now, as a test sets it
    solana_pool: list[str] = field(default_factory=list)  # unused addresses, handed out first to last
    next_index: dict[str, int] = field(default_factory=dict)
    rows: list[SQLModel] = field(default_factory=list)


class MemoryIntake:
    def __init__(self, tables: IntakeTables, emit):
        self.tables = tables
        self.emit = emit

    def board(self, now: datetime) -> MethodBoard:
        return self.tables.board

    def take_index(self, network: str) -> int:
        index = self.tables.next_index.get(network, 0)
        self.tables.next_index[network] = index + 1
        return index

    def take_solana_address(self, intent_id: str) -> str | None:
        return self.tables.solana_pool.pop(0) if self.tables.solana_pool else None

    def add(self, row: SQLModel) -> None:
        self.tables.rows.append(row)


def intake_units(board: MethodBoard, solana_pool: list[str] = ()) -> MemoryUnits:
    return MemoryUnits("payments", IntakeTables(board, list(solana_pool)), MemoryIntake)
