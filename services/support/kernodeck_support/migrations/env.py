from sqlmodel import SQLModel

from kernodeck_kit import tables  # noqa: F401  (outbox and inbox tables)
from kernodeck_kit.migrations import run_env
from kernodeck_support import store  # noqa: F401  (registers the tables)

run_env(SQLModel.metadata)
