from sqlmodel import SQLModel

from kernodeck_kit import tables  # noqa: F401  (outbox and inbox tables)
from kernodeck_kit.migrations import run_env
from kernodeck_payments.ledger import store as ledger_store  # noqa: F401  (registers the tables)
from kernodeck_payments.rates import store as rates_store  # noqa: F401
from kernodeck_payments.store import tables as payment_tables  # noqa: F401

run_env(SQLModel.metadata)
