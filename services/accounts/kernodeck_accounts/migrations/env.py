from sqlmodel import SQLModel

from kernodeck_accounts import store, telegram_links  # noqa: F401  (registers the tables)
from kernodeck_kit import tables  # noqa: F401  (outbox and inbox tables)
from kernodeck_kit.migrations import run_env

run_env(SQLModel.metadata)
