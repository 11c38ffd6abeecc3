"""The payments service's tables and queries (ledger and rates keep their own)."""
