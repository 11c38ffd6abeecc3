"""The USD ledger: double-entry, append-only, integer cents, one idempotency key per entry."""
